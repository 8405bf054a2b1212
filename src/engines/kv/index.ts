/** KV version 2 secrets engine module: routes in routes.ts, domain in kv-backend.ts. */
import type { EngineModule } from '../../framework/engine.js';
import { KvBackend } from './kv-backend.js';
import { kvRoutes } from './routes.js';

export { KvBackend } from './kv-backend.js';
export type { KvConfig, VersionMetadata, VersionState, DataRead, PatchResult, MetadataChanges, WriteOptions } from './kv-backend.js';

/** The KV v2 engine module. */
export const kvEngine: EngineModule<KvBackend> = {
  type: 'kv',
  accessorPrefix: 'kv',
  description: 'Versioned key/value secrets (KV version 2)',
  routes: kvRoutes,
  async create(env) {
    return new KvBackend(env);
  },
};
