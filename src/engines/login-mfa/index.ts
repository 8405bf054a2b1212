/**
 * The login MFA modules: `identity/mfa/` (methods, secrets, enforcements) and `sys/mfa/`
 * (validate). Both serve the core's one LoginMfa store; the core mounts them internally.
 */
import type { LoginMfa } from '../../auth/mfa/login-mfa.js';
import type { EngineModule } from '../../framework/engine.js';
import { identityMfaRoutes, sysMfaRoutes } from './routes.js';

/** The two internal modules, built for the core's store. */
export function loginMfaModules(mfa: LoginMfa): { identity: EngineModule<LoginMfa>; sys: EngineModule<LoginMfa> } {
  return {
    identity: {
      type: 'identity',
      accessorPrefix: 'identity_mfa',
      description: 'login MFA methods and enforcements',
      routes: identityMfaRoutes,
      create: async () => mfa,
    },
    sys: {
      type: 'system',
      accessorPrefix: 'system_mfa',
      description: 'login MFA validation',
      routes: sysMfaRoutes,
      create: async () => mfa,
    },
  };
}
