/** Mountable engine types, by `sys/mounts` type name. */
import type { EngineModule } from '../framework/engine.js';
import { transitEngine } from './transit/index.js';
import { kvEngine } from './kv/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const ENGINES: Record<string, EngineModule<any>> = {
  transit: transitEngine,
  kv: kvEngine,
};
