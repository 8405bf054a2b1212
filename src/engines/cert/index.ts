/** The cert auth method module (type "cert"), mounted under auth/. */
import type { EngineModule } from '../../framework/engine.js';
import { CertEngine } from './cert-engine.js';
import { certRoutes } from './routes.js';

/** cert: log in with the TLS client certificate of the connection (mTLS). */
export const certMethod: EngineModule<CertEngine> = {
  type: 'cert',
  accessorPrefix: 'auth_cert',
  description: 'TLS client certificate login',
  routes: certRoutes,
  async create(env) {
    return new CertEngine(env);
  },
};
