/** Secret sync module, mounted internally at sys/sync/ (spec 4.4, reference sync-wire.md). */
import type { EngineModule } from '../framework/engine.js';
import { SyncBackend } from './backend.js';
import { syncRoutes } from './routes.js';

/** The secret-sync module. */
export const syncEngine: EngineModule<SyncBackend> = {
  type: 'sync',
  accessorPrefix: 'sync',
  description: 'Secret sync: push KV v2 secrets to external secret stores',
  routes: syncRoutes,
  async create(env) {
    return new SyncBackend(env);
  },
};
