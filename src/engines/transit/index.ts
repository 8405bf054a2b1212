/** Transit secrets engine module: its routes and the factory of a mount's live state (transit-engine.ts). */
import type { EngineModule } from '../../framework/engine.js';
import { keyRoutes } from './routes/key-routes.js';
import { dataRoutes } from './routes/data-routes.js';
import { jwtRoutes } from './routes/jwt-routes.js';
import { transitExtraRoutes } from './routes/extra-routes.js';
import { TransitKeyStore } from './keyring/key-store.js';
import { TransitEngine } from './transit-engine.js';

export { TransitEngine, type KeysConfig } from './transit-engine.js';

/** The transit engine module. */
export const transitEngine: EngineModule<TransitEngine> = {
  type: 'transit',
  accessorPrefix: 'transit',
  description: 'Encryption as a service: named keys, encrypt/decrypt, sign/verify, HMAC',
  routes: [...keyRoutes, ...dataRoutes, ...jwtRoutes, ...transitExtraRoutes],
  async create(env) {
    // cache-config takes effect here: at start-up and on sys/plugins/reload/backend (spec 2.4).
    const probe = new TransitKeyStore(env.storage, env.clock, env.logger);
    const size = (await probe.readConfig<{ size: number }>('cache'))?.size ?? 0;
    const engine = new TransitEngine(env, size);
    // Auto-rotation writes: only the active node of a cluster runs it.
    if (!env.standby) engine.rotator.start();
    return engine;
  },
};
