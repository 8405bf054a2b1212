/** Secret sync module, mounted internally at sys/sync/ (spec 4.4, reference sync-wire.md). */
import type { EngineModule } from '../framework/engine.js';
import { SyncEngine } from './sync-engine.js';
import { syncRoutes } from './routes.js';

/** The secret-sync module. */
export const syncEngine: EngineModule<SyncEngine> = {
  type: 'sync',
  accessorPrefix: 'sync',
  description: 'Secret sync: push KV v2 secrets to external secret stores',
  routes: syncRoutes,
  async create(env) {
    return new SyncEngine(env);
  },
};
