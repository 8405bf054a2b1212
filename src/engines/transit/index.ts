/** Transit secrets engine module (issue 3 and 4 fill in routes and state). */
import type { EngineModule } from '../../framework/engine.js';
import type { EngineEnv } from '../../framework/context.js';
import { keyRoutes } from './routes/key-routes.js';
import { dataRoutes } from './routes/data-routes.js';

/** Live state of one transit mount. */
export class TransitBackend {
  constructor(readonly env: EngineEnv) {}
  async close(): Promise<void> {}
}

/** The transit engine module. */
export const transitEngine: EngineModule<TransitBackend> = {
  type: 'transit',
  accessorPrefix: 'transit',
  description: 'Encryption as a service: named keys, encrypt/decrypt, sign/verify, HMAC',
  routes: [...keyRoutes, ...dataRoutes],
  async create(env) {
    return new TransitBackend(env);
  },
};
