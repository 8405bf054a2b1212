/** The userpass auth method module (type "userpass"), mounted under auth/. */
import type { EngineModule } from '../../framework/engine.js';
import { userpassRoutes } from './routes.js';
import { UserpassEngine } from './userpass-engine.js';

/** userpass: people log in with a username and a password (bcrypt-hashed). */
export const userpassMethod: EngineModule<UserpassEngine> = {
  type: 'userpass',
  accessorPrefix: 'auth_userpass',
  description: 'Username and password login',
  routes: userpassRoutes,
  async create(env) {
    return new UserpassEngine(env);
  },
};
