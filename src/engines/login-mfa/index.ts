/**
 * The login MFA modules: `identity/mfa/` (methods, secrets, enforcements) and `sys/mfa/`
 * (validate). Both are the core's one LoginMfa store, mounted internally by the core.
 */
import type { LoginMfa } from '../../auth/mfa/login-mfa.js';
import type { EngineModule } from '../../framework/engine.js';
import { identityMfaRoutes, sysMfaRoutes } from './routes.js';

/** The core as these modules see it: the owner of the login MFA store. */
export interface MfaHost {
  readonly loginMfa: LoginMfa;
}

/** identity/mfa/: TOTP methods, admin-generate/destroy, login enforcements. */
export const identityMfaEngine: EngineModule<LoginMfa> = {
  type: 'identity',
  accessorPrefix: 'identity_mfa',
  description: 'login MFA methods and enforcements',
  routes: identityMfaRoutes,
  async create(env) {
    return (env.core as unknown as MfaHost).loginMfa;
  },
};

/** sys/mfa/: validate a pending MFA login. */
export const sysMfaEngine: EngineModule<LoginMfa> = {
  type: 'system',
  accessorPrefix: 'system_mfa',
  description: 'login MFA validation',
  routes: sysMfaRoutes,
  async create(env) {
    return (env.core as unknown as MfaHost).loginMfa;
  },
};
