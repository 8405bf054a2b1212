/** KV version 2 secrets engine module (issue 5 fills in routes and state). */
import type { EngineModule } from '../../framework/engine.js';
import type { EngineEnv } from '../../framework/context.js';

/** Live state of one KV v2 mount. */
export class KvBackend {
  constructor(readonly env: EngineEnv) {}
  async close(): Promise<void> {}
}

/** The KV v2 engine module. */
export const kvEngine: EngineModule<KvBackend> = {
  type: 'kv',
  accessorPrefix: 'kv',
  description: 'Versioned key/value secrets (KV version 2)',
  routes: [],
  async create(env) {
    return new KvBackend(env);
  },
};
