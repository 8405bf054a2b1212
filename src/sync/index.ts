/** Secret sync module, mounted internally at sys/sync/ (issue 6 fills in routes and state). */
import type { EngineModule } from '../framework/engine.js';
import type { EngineEnv } from '../framework/context.js';

/** Live state of secret sync. */
export class SyncBackend {
  constructor(readonly env: EngineEnv) {}
  async close(): Promise<void> {}
}

/** The secret-sync module. */
export const syncEngine: EngineModule<SyncBackend> = {
  type: 'sync',
  accessorPrefix: 'sync',
  description: 'Secret sync: push KV v2 secrets to external secret stores',
  routes: [],
  async create(env) {
    return new SyncBackend(env);
  },
};
