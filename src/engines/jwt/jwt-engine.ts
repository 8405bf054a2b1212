/**
 * JWT/OIDC auth method domain (hashicorp/vault-plugin-auth-jwt: path_config.go, path_role.go,
 * path_login.go, path_oidc.go; identity-wire.md section 3): config, roles, `login` with a presented
 * JWT, and the OIDC authorization-code flow with PKCE, state and nonce. No HTTP routing in here.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { KeyObject } from 'node:crypto';
import type { EngineEnv, IssuedLogin } from '../../framework/context.js';
import { denied, invalid, notFound } from '../../framework/errors.js';
import { getJSON, putJSON } from '../../storage/backend.js';
import { addressAllowed } from '../auth-common/cidr.js';
import {
  defaultTokenParams,
  loginAuthOf,
  parseTokenParams,
  tokenParamsView,
  type TokenParams,
} from '../auth-common/token-params.js';
import { checkBoundClaims, getClaim, groupsOf, mapClaims } from './claims.js';
import { discover, fetchJson, parsePublicKeys, remoteKeys, type Discovery, type KeyResolver } from './key-sources.js';
import { SUPPORTED_ALGS, validateJwt } from './validator.js';

/** Stored mount configuration. */
export interface JwtConfig {
  oidc_discovery_url: string;
  oidc_discovery_ca_pem: string;
  oidc_client_id: string;
  oidc_client_secret: string;
  oidc_response_mode: string;
  oidc_response_types: string[];
  jwks_url: string;
  jwks_ca_pem: string;
  jwt_validation_pubkeys: string[];
  jwt_supported_algs: string[];
  bound_issuer: string;
  default_role: string;
  provider_config: Record<string, unknown>;
  namespace_in_state: boolean;
}

/** A stored role. */
export interface JwtRole extends TokenParams {
  role_type: string;
  bound_audiences: string[];
  user_claim: string;
  user_claim_json_pointer: boolean;
  bound_subject: string;
  bound_claims: Record<string, unknown> | null;
  bound_claims_type: string;
  claim_mappings: Record<string, string> | null;
  groups_claim: string;
  allowed_redirect_uris: string[];
  oidc_scopes: string[];
  clock_skew_leeway: number;
  expiration_leeway: number;
  not_before_leeway: number;
  verbose_oidc_logging: boolean;
  max_age: number;
}

/** An authorization request waiting for its callback. */
interface PendingState {
  role: string;
  redirectUri: string;
  nonce: string;
  verifier: string;
  clientNonce: string;
  expires: number;
}

const STATE_TTL_MS = 10 * 60_000;
const MAX_PENDING = 10_000;
const NAME_RE = /^\w(?:[\w.-]*\w)?$/;

/** Role names are lower-cased (path_role.go). */
export function jwtRoleName(raw: string): string {
  if (!NAME_RE.test(raw) || raw.length > 512) throw invalid('name', 'must be letters, digits, "_", "-" or "."');
  return raw.toLowerCase();
}

function b64url(buf: Buffer): string {
  return buf.toString('base64url');
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]' || host === '::1';
}

/** Vault's redirect check: exact (case-insensitive) match, ports ignored for loopback hosts (path_oidc.go validRedirect). */
export function redirectAllowed(uri: string, allowed: string[]): boolean {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  return allowed.some((a) => {
    if (a.toLowerCase() === uri.toLowerCase()) return true;
    let w: URL;
    try {
      w = new URL(a);
    } catch {
      return false;
    }
    return (
      isLoopback(u.hostname) &&
      w.hostname === u.hostname &&
      w.protocol === u.protocol &&
      w.pathname === u.pathname &&
      w.search === u.search
    );
  });
}

/** POST a form and parse a JSON answer (the OIDC token endpoint). */
function postForm(
  url: string,
  form: Record<string, string>,
  basic: [string, string],
  caPem?: string,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const body = new URLSearchParams(form).toString();
    const auth = Buffer.from(`${encodeURIComponent(basic[0])}:${encodeURIComponent(basic[1])}`).toString('base64');
    const fn = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = fn(
      u,
      {
        method: 'POST',
        timeout: 10_000,
        agent: u.protocol === 'https:' && caPem ? new HttpsAgent({ ca: caPem }) : undefined,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          authorization: `Basic ${auth}`,
          accept: 'application/json',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let v: unknown;
          try {
            v = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return reject(new Error(`token endpoint answered ${res.statusCode} without JSON`));
          }
          const o = (v ?? {}) as Record<string, unknown>;
          if ((res.statusCode ?? 0) >= 300)
            return reject(
              new Error(
                `token endpoint: ${String(o.error ?? res.statusCode)}${o.error_description ? `: ${String(o.error_description)}` : ''}`,
              ),
            );
          resolve(o);
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('token endpoint timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** One JWT or OIDC mount. */
export class JwtEngine {
  private config: JwtConfig | null = null;
  private loaded = false;
  private keys: KeyObject[] | KeyResolver | null = null;
  private discovery: Discovery | null = null;
  private readonly pending = new Map<string, PendingState>();

  constructor(readonly env: EngineEnv) {}

  /** The stored config (cached). */
  async getConfig(): Promise<JwtConfig | null> {
    if (!this.loaded) {
      this.config = await getJSON<JwtConfig>(this.env.storage, 'config');
      this.loaded = true;
    }
    return this.config;
  }

  /** Drop cached config and keys (another daemon changed them). */
  invalidate(key: string): void {
    if (key === 'config') {
      this.loaded = false;
      this.keys = null;
      this.discovery = null;
    }
  }

  /** Write the config (path_config.go pathConfigWrite): exactly one key source, checked by fetching it. */
  async writeConfig(input: Partial<JwtConfig>): Promise<void> {
    const c: JwtConfig = {
      oidc_discovery_url: input.oidc_discovery_url ?? '',
      oidc_discovery_ca_pem: input.oidc_discovery_ca_pem ?? '',
      oidc_client_id: input.oidc_client_id ?? '',
      oidc_client_secret: input.oidc_client_secret ?? '',
      oidc_response_mode: input.oidc_response_mode ?? '',
      oidc_response_types: input.oidc_response_types ?? [],
      jwks_url: input.jwks_url ?? '',
      jwks_ca_pem: input.jwks_ca_pem ?? '',
      jwt_validation_pubkeys: (input.jwt_validation_pubkeys ?? []).filter((s) => s.trim() !== ''),
      jwt_supported_algs: input.jwt_supported_algs ?? [],
      bound_issuer: input.bound_issuer ?? '',
      default_role: (input.default_role ?? '').toLowerCase(),
      provider_config: input.provider_config ?? {},
      namespace_in_state: input.namespace_in_state ?? true,
    };
    const sources = [c.oidc_discovery_url, c.jwks_url, c.jwt_validation_pubkeys.length ? 'x' : ''].filter(
      (s) => s !== '',
    ).length;
    if (sources !== 1)
      throw invalid(
        "exactly one of 'jwt_validation_pubkeys', 'jwks_url', 'jwks_pairs' or 'oidc_discovery_url' must be set",
      );
    if (c.oidc_client_id && !c.oidc_discovery_url) throw invalid("'oidc_discovery_url' must be set for OIDC");
    if (Boolean(c.oidc_client_id) !== Boolean(c.oidc_client_secret))
      throw invalid("both 'oidc_client_id' and 'oidc_client_secret' must be set for OIDC");
    if (!['', 'query', 'form_post'].includes(c.oidc_response_mode))
      throw invalid(`invalid response_mode: ${JSON.stringify(c.oidc_response_mode)}`);
    for (const t of c.oidc_response_types)
      if (t !== 'code' && t !== 'id_token') throw invalid(`invalid response_type: ${JSON.stringify(t)}`);
    if (c.oidc_response_types.includes('id_token') && c.oidc_response_mode !== 'form_post')
      throw invalid('query response_mode may not be used with an id_token response_type');
    for (const a of c.jwt_supported_algs)
      if (!(SUPPORTED_ALGS as readonly string[]).includes(a))
        throw invalid(`invalid jwt_supported_algs: unsupported signing algorithm ${JSON.stringify(a)}`);
    let keys: KeyObject[] | KeyResolver;
    let disc: Discovery | null = null;
    if (c.jwt_validation_pubkeys.length) keys = parsePublicKeys(c.jwt_validation_pubkeys);
    else if (c.jwks_url) {
      try {
        await fetchJson(c.jwks_url, c.jwks_ca_pem || undefined);
      } catch (e) {
        throw invalid(`error checking jwks URL ${c.jwks_url}: ${(e as Error).message}`);
      }
      keys = remoteKeys(c.jwks_url, c.jwks_ca_pem || undefined);
    } else {
      try {
        disc = await discover(c.oidc_discovery_url, c.oidc_discovery_ca_pem || undefined);
      } catch (e) {
        throw invalid(`error checking oidc discovery URL: ${(e as Error).message}`);
      }
      keys = remoteKeys(disc.jwks_uri, c.oidc_discovery_ca_pem || undefined);
    }
    await putJSON(this.env.storage, 'config', c);
    this.config = c;
    this.loaded = true;
    this.keys = keys;
    this.discovery = disc;
  }

  /** Config read view: everything but the client secret. */
  static configView(c: JwtConfig): Record<string, unknown> {
    const { oidc_client_secret: _secret, ...rest } = c;
    return { ...rest, jwks_pairs: [], unsupported_critical_cert_extensions: [] };
  }

  private async keySource(c: JwtConfig): Promise<{ keys: KeyObject[] | KeyResolver; discovery: Discovery | null }> {
    if (!this.keys) {
      if (c.jwt_validation_pubkeys.length) this.keys = parsePublicKeys(c.jwt_validation_pubkeys);
      else if (c.jwks_url) this.keys = remoteKeys(c.jwks_url, c.jwks_ca_pem || undefined);
      else {
        this.discovery = await discover(c.oidc_discovery_url, c.oidc_discovery_ca_pem || undefined);
        this.keys = remoteKeys(this.discovery.jwks_uri, c.oidc_discovery_ca_pem || undefined);
      }
    }
    return { keys: this.keys, discovery: this.discovery };
  }

  /** A role or null. */
  async role(name: string): Promise<JwtRole | null> {
    return getJSON<JwtRole>(this.env.storage, `role/${name}`);
  }

  /** Role names. */
  async listRoles(): Promise<string[]> {
    return (await this.env.storage.list('role/')).filter((n) => !n.endsWith('/')).sort();
  }

  /** Delete a role. */
  async deleteRole(name: string): Promise<void> {
    await this.env.storage.delete(`role/${name}`);
  }

  /**
   * Create or update a role (path_role.go pathRoleCreateUpdate): fields not sent keep their stored
   * value, except `role_type`, which defaults to "oidc" on every write as Vault does.
   */
  async writeRole(name: string, d: Record<string, unknown>): Promise<string[]> {
    const r: JwtRole = (await this.role(name)) ?? {
      role_type: 'oidc',
      bound_audiences: [],
      user_claim: '',
      user_claim_json_pointer: false,
      bound_subject: '',
      bound_claims: null,
      bound_claims_type: 'string',
      claim_mappings: null,
      groups_claim: '',
      allowed_redirect_uris: [],
      oidc_scopes: [],
      clock_skew_leeway: 0,
      expiration_leeway: 0,
      not_before_leeway: 0,
      verbose_oidc_logging: false,
      max_age: 0,
      ...defaultTokenParams(),
    };
    const warnings = parseTokenParams(r, d, this.env.mount);
    const roleType = (d.role_type as string | undefined) ?? 'oidc';
    if (roleType !== 'jwt' && roleType !== 'oidc') throw invalid(`invalid 'role_type': ${roleType}`);
    r.role_type = roleType;
    const set = <K extends keyof JwtRole>(k: K) => {
      if (d[k] !== undefined) (r as unknown as Record<string, unknown>)[k] = d[k];
    };
    for (const k of [
      'bound_audiences',
      'user_claim',
      'user_claim_json_pointer',
      'bound_subject',
      'groups_claim',
      'allowed_redirect_uris',
      'oidc_scopes',
      'clock_skew_leeway',
      'expiration_leeway',
      'not_before_leeway',
      'verbose_oidc_logging',
      'max_age',
    ] as const)
      set(k);
    if (d.bound_claims_type !== undefined) {
      if (d.bound_claims_type !== 'string' && d.bound_claims_type !== 'glob')
        throw invalid(`invalid 'bound_claims_type': ${String(d.bound_claims_type)}`);
      r.bound_claims_type = d.bound_claims_type;
    }
    if (d.bound_claims !== undefined) {
      const bc = d.bound_claims as Record<string, unknown>;
      for (const [k, v] of Object.entries(bc)) {
        const vals = Array.isArray(v) ? v : [v];
        for (const x of vals) {
          if (!['string', 'number', 'boolean'].includes(typeof x))
            throw invalid(`bound_claims.${k}`, 'values must be strings, numbers, booleans or lists of them');
        }
      }
      r.bound_claims = Object.keys(bc).length ? bc : null;
    }
    if (r.bound_claims_type === 'glob' && r.bound_claims) {
      for (const [k, v] of Object.entries(r.bound_claims)) {
        for (const x of Array.isArray(v) ? v : [v])
          if (typeof x !== 'string') throw invalid(`claim is not a string: ${JSON.stringify(k)}`);
      }
    }
    if (d.claim_mappings !== undefined) {
      const cm = d.claim_mappings as Record<string, unknown>;
      const targets = new Set<string>();
      for (const [k, v] of Object.entries(cm)) {
        if (typeof v !== 'string') throw invalid(`claim_mappings.${k}`, 'must be a string');
        if (v === 'role') throw invalid('metadata key "role" is reserved and may not be a mapping destination');
        if (targets.has(v)) throw invalid(`multiple keys are mapped to metadata key ${JSON.stringify(v)}`);
        targets.add(v);
      }
      r.claim_mappings = Object.keys(cm).length ? (cm as Record<string, string>) : null;
    }
    if (d.verbose_oidc_logging === true)
      warnings.push(
        'verbose_oidc_logging has been enabled for this role. This setting should only be enabled for debugging, as it logs claims from the ID token.',
      );
    if (!r.user_claim) throw invalid('a user claim must be defined on the role');
    if (
      r.role_type === 'jwt' &&
      !r.bound_audiences.length &&
      !r.bound_subject &&
      !r.bound_claims &&
      !r.token_bound_cidrs.length
    ) {
      throw invalid('must have at least one bound constraint when creating/updating a role');
    }
    if (r.role_type === 'oidc' && !r.allowed_redirect_uris.length)
      throw invalid("'allowed_redirect_uris' must be set if 'role_type' is 'oidc' or unspecified.");
    if (r.token_max_ttl && r.token_ttl > r.token_max_ttl) throw invalid('ttl should not be greater than max ttl');
    await putJSON(this.env.storage, `role/${name}`, r);
    return warnings;
  }

  /** Role read view. */
  static roleView(r: JwtRole): Record<string, unknown> {
    return {
      role_type: r.role_type,
      bound_audiences: r.bound_audiences,
      user_claim: r.user_claim,
      user_claim_json_pointer: r.user_claim_json_pointer,
      bound_subject: r.bound_subject,
      bound_claims: r.bound_claims,
      bound_claims_type: r.bound_claims_type,
      claim_mappings: r.claim_mappings,
      groups_claim: r.groups_claim,
      allowed_redirect_uris: r.allowed_redirect_uris,
      oidc_scopes: r.oidc_scopes,
      clock_skew_leeway: r.clock_skew_leeway,
      expiration_leeway: r.expiration_leeway,
      not_before_leeway: r.not_before_leeway,
      verbose_oidc_logging: r.verbose_oidc_logging,
      max_age: r.max_age,
      ...tokenParamsView(r),
    };
  }

  /** The role a login request uses: its `role`, else the config's default_role (role-based rate-limit quotas). */
  async resolveLoginRole(data: Record<string, unknown>): Promise<string | undefined> {
    if (typeof data.role === 'string' && data.role !== '') return data.role.toLowerCase();
    return (await this.getConfig())?.default_role || undefined;
  }

  private async loginRole(name: string | undefined, c: JwtConfig): Promise<{ name: string; role: JwtRole }> {
    const n = (name || c.default_role || '').toLowerCase();
    if (!n) throw invalid('missing role');
    const role = NAME_RE.test(n) ? await this.role(n) : null;
    if (!role) throw invalid(`role ${JSON.stringify(n)} could not be found`);
    return { name: n, role };
  }

  /** `POST login` with a presented JWT (path_login.go pathLogin). */
  async login(roleName: string | undefined, jwt: string | undefined, remoteAddress: string): Promise<IssuedLogin> {
    const c = await this.getConfig();
    if (!c) throw invalid('could not load configuration');
    const { name, role } = await this.loginRole(roleName, c);
    if (role.role_type === 'oidc') throw invalid('role with oidc role_type is not allowed');
    if (!jwt) throw invalid('missing token');
    if (role.token_bound_cidrs.length && !addressAllowed(remoteAddress, role.token_bound_cidrs)) throw denied();
    if (c.oidc_client_id) throw invalid('error configuring token validator: unsupported config type');
    const { keys } = await this.keySource(c);
    const claims = await validateJwt(jwt, {
      keys,
      algorithms: c.jwt_supported_algs.length ? c.jwt_supported_algs : SUPPORTED_ALGS,
      boundIssuer: c.bound_issuer || undefined,
      audiences: role.bound_audiences,
      boundSubject: role.bound_subject || undefined,
      clockSkewLeeway: role.clock_skew_leeway,
      expirationLeeway: role.expiration_leeway,
      notBeforeLeeway: role.not_before_leeway,
      now: this.env.clock.now() / 1000,
    });
    return this.finish(name, role, claims);
  }

  /** Claims -> user, bound claims, metadata, groups -> token (shared by login and the OIDC callback). */
  private async finish(name: string, role: JwtRole, claims: Record<string, unknown>): Promise<IssuedLogin> {
    const user = getClaim(claims, role.user_claim, role.user_claim_json_pointer);
    if (user === undefined) throw invalid(`claim ${JSON.stringify(role.user_claim)} not found in token`);
    if (typeof user !== 'string')
      throw invalid(`claim ${JSON.stringify(role.user_claim)} could not be converted to string`);
    if (role.bound_claims) checkBoundClaims(claims, role.bound_claims, role.bound_claims_type === 'glob');
    const mapped = role.claim_mappings ? mapClaims(claims, role.claim_mappings) : {};
    const groups = role.groups_claim ? groupsOf(claims, role.groups_claim) : [];
    const metadata = { ...mapped, role: name };
    const issue = this.env.core.issueLoginToken;
    if (!issue) throw new Error('token store unavailable');
    return issue.call(
      this.env.core,
      this.env.mount,
      loginAuthOf(role, {
        path: `${this.env.mount.path}login`,
        displayName: user,
        metadata,
        alias: { name: user, metadata: mapped },
        role: name,
        groupAliases: groups,
      }),
    );
  }

  /** `POST oidc/auth_url` (path_oidc.go authURL): "" when the redirect URI is not allowed, as Vault answers. */
  async authUrl(
    roleName: string | undefined,
    redirectUri: string | undefined,
    clientNonce: string | undefined,
  ): Promise<string> {
    const c = await this.getConfig();
    if (!c || !c.oidc_client_id) throw invalid('OIDC login is not configured for this mount');
    if (!redirectUri) throw invalid('missing redirect_uri');
    const { name, role } = await this.loginRole(roleName, c);
    if (role.role_type !== 'oidc') throw invalid(`role ${JSON.stringify(name)} could not be found`);
    if (!redirectAllowed(redirectUri, role.allowed_redirect_uris)) {
      this.env.logger.warn('oidc auth_url: unauthorized redirect_uri', { role: name });
      return '';
    }
    const { discovery } = await this.keySource(c);
    if (!discovery?.authorization_endpoint) throw invalid('the provider has no authorization_endpoint');
    this.sweep();
    const state = `st_${b64url(randomBytes(15))}`;
    const nonce = `n_${b64url(randomBytes(15))}`;
    const verifier = b64url(randomBytes(32));
    this.pending.set(state, {
      role: name,
      redirectUri,
      nonce,
      verifier,
      clientNonce: clientNonce ?? '',
      expires: this.env.clock.now() + STATE_TTL_MS,
    });
    const u = new URL(discovery.authorization_endpoint);
    const scopes = ['openid', ...role.oidc_scopes.filter((s) => s !== 'openid')];
    u.searchParams.set('client_id', c.oidc_client_id);
    u.searchParams.set('response_type', 'code');
    u.searchParams.set('redirect_uri', redirectUri);
    u.searchParams.set('scope', scopes.join(' '));
    u.searchParams.set('state', state);
    u.searchParams.set('nonce', nonce);
    u.searchParams.set('code_challenge', b64url(createHash('sha256').update(verifier).digest()));
    u.searchParams.set('code_challenge_method', 'S256');
    if (role.max_age) u.searchParams.set('max_age', String(role.max_age));
    return u.toString();
  }

  /** `GET oidc/callback` (path_oidc.go pathCallback): state, code exchange with the PKCE verifier, ID token checks. */
  async callback(
    state: string | undefined,
    code: string | undefined,
    clientNonce: string | undefined,
  ): Promise<IssuedLogin> {
    const c = await this.getConfig();
    if (!c || !c.oidc_client_id) throw invalid('OIDC login is not configured for this mount');
    this.sweep();
    const p = state ? this.pending.get(state) : undefined;
    if (!p || !state) throw invalid('Expired or missing OAuth state.');
    // A state is single-use: a replayed callback finds nothing.
    this.pending.delete(state);
    if (p.clientNonce && p.clientNonce !== clientNonce) throw invalid('invalid client_nonce');
    if (!code) throw invalid('Vault login failed. Error exchanging oidc code: "missing code".');
    const role = await this.role(p.role);
    if (!role) throw invalid(`role ${JSON.stringify(p.role)} could not be found`);
    const { keys, discovery } = await this.keySource(c);
    if (!discovery?.token_endpoint) throw invalid('the provider has no token_endpoint');
    let idToken: string;
    try {
      const t = await postForm(
        discovery.token_endpoint,
        { grant_type: 'authorization_code', code, redirect_uri: p.redirectUri, code_verifier: p.verifier },
        [c.oidc_client_id, c.oidc_client_secret],
        c.oidc_discovery_ca_pem || undefined,
      );
      if (typeof t.id_token !== 'string') throw new Error('no id_token in the token response');
      idToken = t.id_token;
    } catch (e) {
      throw invalid(`Vault login failed. Error exchanging oidc code: ${JSON.stringify((e as Error).message)}.`);
    }
    let claims: Record<string, unknown>;
    try {
      claims = await validateJwt(idToken, {
        keys,
        algorithms: c.jwt_supported_algs.length ? c.jwt_supported_algs : ['RS256'],
        boundIssuer: discovery.issuer,
        audiences: [c.oidc_client_id],
        clockSkewLeeway: role.clock_skew_leeway,
        expirationLeeway: role.expiration_leeway,
        notBeforeLeeway: role.not_before_leeway,
        now: this.env.clock.now() / 1000,
        nonce: p.nonce,
      });
    } catch (e) {
      throw invalid(`Token verification failed. ${(e as Error).message}`);
    }
    if (role.bound_subject && claims.sub !== role.bound_subject)
      throw invalid('sub claim does not match bound subject');
    return this.finish(p.role, role, claims);
  }

  private sweep(): void {
    const now = this.env.clock.now();
    for (const [k, v] of this.pending) if (v.expires <= now) this.pending.delete(k);
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
  }

  /** Throws 404 when no role `name` exists (reads). */
  async mustRole(name: string): Promise<JwtRole> {
    const r = await this.role(name);
    if (!r) throw notFound();
    return r;
  }
}
