/** Transit secrets engine module: its routes and the factory of a mount's live state (transit-backend.ts). */
import type { EngineModule } from '../../framework/engine.js';
import { keyRoutes } from './routes/key-routes.js';
import { dataRoutes } from './routes/data-routes.js';
import { jwtRoutes } from './routes/jwt-routes.js';
import { TransitKeyStore } from './keyring/key-store.js';
import { TransitBackend } from './transit-backend.js';

export { TransitBackend, type KeysConfig } from './transit-backend.js';

/** The transit engine module. */
export const transitEngine: EngineModule<TransitBackend> = {
  type: 'transit',
  accessorPrefix: 'transit',
  description: 'Encryption as a service: named keys, encrypt/decrypt, sign/verify, HMAC',
  routes: [...keyRoutes, ...dataRoutes, ...jwtRoutes],
  async create(env) {
    // cache-config takes effect here: at start-up and on sys/plugins/reload/backend (spec 2.4).
    const probe = new TransitKeyStore(env.storage, env.clock, env.logger);
    const size = (await probe.readConfig<{ size: number }>('cache'))?.size ?? 0;
    const backend = new TransitBackend(env, size);
    // Auto-rotation writes: only the active node of a cluster runs it.
    if (!env.standby) backend.rotator.start();
    return backend;
  },
};
