/** KV version 2 secrets engine module: routes in routes.ts, domain in kv-engine.ts. */
import type { EngineModule } from '../../framework/engine.js';
import { KvEngine } from './kv-engine.js';
import { kvRoutes } from './routes.js';

export { KvEngine } from './kv-engine.js';
export type { DataRead, PatchResult } from './kv-engine.js';
export type { KvConfig, VersionMetadata, VersionState, MetadataChanges, WriteOptions } from './kv-metadata.js';

/** The KV v2 engine module. */
export const kvEngine: EngineModule<KvEngine> = {
  type: 'kv',
  accessorPrefix: 'kv',
  description: 'Versioned key/value secrets (KV version 2)',
  routes: kvRoutes,
  async create(env) {
    return new KvEngine(env);
  },
};
