/** The JWT/OIDC auth method modules (types "jwt" and "oidc" share one implementation, as in Vault). */
import type { EngineModule } from '../../framework/engine.js';
import { JwtEngine } from './jwt-engine.js';
import { jwtRoutes } from './routes.js';

/** JWT: log in with a signed JWT (CI identity tokens). */
export const jwtMethod: EngineModule<JwtEngine> = {
  type: 'jwt',
  accessorPrefix: 'auth_jwt',
  description: 'JWT/OIDC login (CI identity tokens, OIDC browser flow)',
  routes: jwtRoutes,
  async create(env) {
    return new JwtEngine(env);
  },
};

/** OIDC: the same method mounted for the browser flow. */
export const oidcMethod: EngineModule<JwtEngine> = { ...jwtMethod, type: 'oidc', accessorPrefix: 'auth_oidc' };
