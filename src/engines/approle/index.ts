/** The AppRole auth method module (type "approle"), mounted under auth/. */
import type { EngineModule } from '../../framework/engine.js';
import { AppRoleEngine } from './approle-engine.js';
import { appRoleRoutes } from './routes.js';

/** AppRole: machine login with role_id + secret_id. */
export const appRoleMethod: EngineModule<AppRoleEngine> = {
  type: 'approle',
  accessorPrefix: 'auth_approle',
  description: 'AppRole machine login (role_id and secret_id)',
  routes: appRoleRoutes,
  async create(env) {
    return new AppRoleEngine(env);
  },
};
