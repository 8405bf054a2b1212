/** Mountable engine types, by `sys/mounts` type name, and auth methods, by `sys/auth` type name. */
import type { EngineModule } from '../framework/engine.js';
import { transitEngine } from './transit/index.js';
import { kvEngine } from './kv/index.js';
import { appRoleMethod } from './approle/index.js';
import { jwtMethod, oidcMethod } from './jwt/index.js';
import { userpassMethod } from './userpass/index.js';
import { certMethod } from './cert/index.js';
import { githubMethod } from './github/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const ENGINES: Record<string, EngineModule<any>> = {
  transit: transitEngine,
  kv: kvEngine,
};

/** Auth methods (sys/auth types); `oidc` is the jwt method under another name, as in Vault. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const AUTH_METHODS: Record<string, EngineModule<any>> = {
  approle: appRoleMethod,
  jwt: jwtMethod,
  oidc: oidcMethod,
  userpass: userpassMethod,
  cert: certMethod,
  github: githubMethod,
};
