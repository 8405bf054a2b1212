/** JWT/OIDC routes (identity-wire.md section 3.1): config, roles, login, oidc/auth_url, oidc/callback. */
import { invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import { tokenFields } from '../auth-common/token-params.js';
import { JwtEngine, jwtRoleName, type JwtConfig } from './jwt-engine.js';

const route = routesFor<JwtEngine>();

/** Signed durations (leeways: -1 disables), integer seconds or Go durations. */
const leeway = (help: string) => f.any(help);

function signedSeconds(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string') {
    const s = v.trim();
    if (/^-?\d+$/.test(s)) return Number(s);
    const m = /^(-?)(\d+)(s|m|h)$/.exec(s);
    if (m) return (m[1] ? -1 : 1) * Number(m[2]) * { s: 1, m: 60, h: 3600 }[m[3] as 's' | 'm' | 'h'];
  }
  return NaN;
}

const roleFields = {
  name: f.name('Role name'),
  role_type: f.string('jwt (presented JWT) or oidc (browser flow); defaults to oidc on every write'),
  bound_audiences: f.strings('Audiences; one must be in the token'),
  user_claim: f.string('Claim naming the user (alias name)'),
  user_claim_json_pointer: f.bool('user_claim is a JSON pointer'),
  bound_subject: f.string('Required sub'),
  bound_claims: f.map('Claim -> value or list of values'),
  bound_claims_type: f.string('string (exact) or glob'),
  claim_mappings: f.map('Claim -> token metadata key'),
  groups_claim: f.string('Claim holding group names'),
  allowed_redirect_uris: f.strings('Redirect URIs for the OIDC flow'),
  oidc_scopes: f.strings('Extra OIDC scopes'),
  clock_skew_leeway: leeway('Allowed clock skew (seconds or duration; 0 = 60s, -1 = none)'),
  expiration_leeway: leeway('exp leeway when the token has none (0 = 150s, -1 = none)'),
  not_before_leeway: leeway('nbf leeway when the token has none (0 = 150s, -1 = none)'),
  verbose_oidc_logging: f.bool('Log OIDC claims (debugging)'),
  max_age: f.duration('OIDC max_age'),
  ...tokenFields,
};

/** Routes of a JWT/OIDC mount. */
export const jwtRoutes: AnyRoute[] = [
  route({
    path: 'config',
    summary: 'Configure the key source (discovery, JWKS URL or public keys), issuer and default role',
    fields: {
      oidc_discovery_url: f.string('Issuer URL for OIDC discovery'),
      oidc_discovery_ca_pem: f.string('CA PEM for the discovery URL'),
      oidc_client_id: f.string('OIDC client id (browser flow)'),
      oidc_client_secret: f.string('OIDC client secret (browser flow)').sensitive(),
      oidc_response_mode: f.string('query or form_post'),
      oidc_response_types: f.strings('code or id_token'),
      jwks_url: f.string('JWKS URL'),
      jwks_ca_pem: f.string('CA PEM for the JWKS URL'),
      jwt_validation_pubkeys: f.strings('PEM public keys'),
      jwt_supported_algs: f.strings('Allowed algorithms (default: all ten asymmetric ones)'),
      bound_issuer: f.string('Required iss'),
      default_role: f.string('Role used when login names none'),
      provider_config: f.map('Provider-specific settings'),
      namespace_in_state: f.bool('Accepted for compatibility'),
    },
    operations: {
      read: async ({ engine }) => {
        const c = await engine.getConfig();
        return c ? { data: JwtEngine.configView(c) } : undefined;
      },
      update: async ({ engine, data }) => {
        await engine.writeConfig(data as Partial<JwtConfig>);
      },
    },
  }),
  route({
    path: 'role',
    summary: 'List roles',
    fields: {},
    operations: { list: async ({ engine }) => ({ data: { keys: await engine.listRoles() } }) },
  }),
  route({
    path: 'role/:name',
    summary: 'Create, read, update or delete a role',
    fields: roleFields,
    exists: async ({ engine, data }) => (await engine.role(jwtRoleName(data.name))) !== null,
    operations: {
      read: async ({ engine, data }) => {
        const r = await engine.role(jwtRoleName(data.name));
        return r ? { data: JwtEngine.roleView(r) } : undefined;
      },
      update: async ({ engine, data }) => {
        const d: Record<string, unknown> = { ...data };
        for (const k of ['clock_skew_leeway', 'expiration_leeway', 'not_before_leeway'] as const) {
          const v = signedSeconds(data[k]);
          if (Number.isNaN(v)) throw invalid(k, 'expected seconds or a duration such as "30s"');
          d[k] = v;
        }
        const warnings = await engine.writeRole(jwtRoleName(data.name), d);
        return warnings.length ? { data: null, warnings } : undefined;
      },
      delete: async ({ engine, data }) => {
        await engine.deleteRole(jwtRoleName(data.name));
      },
    },
  }),
  route({
    path: 'login',
    summary: 'Log in with a JWT (CI identity tokens: GitHub Actions, GitLab)',
    fields: {
      role: f.string('Role (default_role when omitted)'),
      jwt: f.string('The signed JWT').sensitive(),
      distributed_claim_access_token: f.string('Accepted for compatibility').sensitive(),
    },
    unauthenticated: true,
    operations: {
      update: async ({ engine, data, remoteAddress }) => {
        const { auth, warnings } = await engine.login(data.role, data.jwt, remoteAddress);
        return { auth, data: null, ...(warnings.length ? { warnings } : {}) };
      },
    },
  }),
  route({
    path: 'oidc/auth_url',
    summary: 'Start the OIDC browser flow: the provider URL to open',
    fields: {
      role: f.string('Role (default_role when omitted)'),
      redirect_uri: f.string('Where the provider sends the browser back'),
      client_nonce: f.string('Nonce the callback must repeat'),
    },
    unauthenticated: true,
    operations: {
      update: async ({ engine, data }) => ({
        data: { auth_url: await engine.authUrl(data.role, data.redirect_uri, data.client_nonce) },
      }),
    },
  }),
  route({
    path: 'oidc/callback',
    summary: 'Finish the OIDC browser flow: exchange the code, verify the ID token, issue a token',
    fields: {
      state: f.string('State from auth_url'),
      code: f.string('Authorization code').sensitive(),
      client_nonce: f.string('The nonce given to auth_url'),
      id_token: f.string('Implicit flow (unsupported)').sensitive(),
      nonce: f.string('Ignored, as in Vault'),
    },
    unauthenticated: true,
    operations: {
      read: async ({ engine, data }) => {
        const { auth, warnings } = await engine.callback(data.state, data.code, data.client_nonce);
        return { auth, data: null, ...(warnings.length ? { warnings } : {}) };
      },
    },
  }),
];
