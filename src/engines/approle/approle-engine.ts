/**
 * AppRole domain (hashicorp/vault builtin/credential/approle: path_role.go, path_login.go, validation.go;
 * identity-wire.md section 2): roles, role ids, secret ids with TTLs, use counts and CIDR bindings.
 * Secret ids are stored only as an HMAC-SHA256 under a per-role key, as Vault does, so storage never
 * holds a usable secret id. No HTTP in here.
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { EngineEnv } from '../../framework/context.js';
import { conflict, denied, invalid, notFound } from '../../framework/errors.js';
import { KeyedLock } from '../../framework/keyed-lock.js';
import { getJSON, putJSON } from '../../storage/backend.js';
import { addressAllowed, cidrsWithin, isCidr } from '../auth-common/cidr.js';
import {
  defaultTokenParams,
  loginAuthOf,
  mountMaxTtl,
  parseTokenParams,
  type TokenParams,
} from '../auth-common/token-params.js';

/** A stored role. */
export interface RoleEntry extends TokenParams {
  name: string;
  role_id: string;
  bind_secret_id: boolean;
  secret_id_bound_cidrs: string[];
  secret_id_num_uses: number;
  secret_id_ttl: number;
  local_secret_ids: boolean;
  /** Per-role HMAC key for secret ids (hex). */
  hmac_key: string;
  /** Legacy values echoed on read only when set. */
  legacy_policies?: string[];
  legacy_period?: number;
}

/** A stored secret id (never the id itself). */
export interface SecretIdEntry {
  secret_id_accessor: string;
  secret_id_num_uses: number;
  secret_id_ttl: number;
  creation_time: string;
  expiration_time: string;
  last_updated_time: string;
  metadata: Record<string, string>;
  cidr_list: string[];
  token_bound_cidrs: string[];
}

/** Role fields a write may carry (coerced by the route). */
export interface RoleInput {
  bind_secret_id?: boolean;
  secret_id_bound_cidrs?: string[];
  bound_cidr_list?: string[];
  secret_id_num_uses?: number;
  secret_id_ttl?: number;
  local_secret_ids?: boolean;
  role_id?: string;
  [token: string]: unknown;
}

/** What generating a secret id takes. */
export interface SecretIdInput {
  metadata?: string;
  cidr_list?: string[];
  token_bound_cidrs?: string[];
  num_uses?: number;
  ttl?: number;
  secret_id?: string;
}

const ZERO_TIME = '0001-01-01T00:00:00Z';
const NAME_RE = /^\w(?:[\w.-]*\w)?$/;

/** Memo of sha(): role names and ids are hashed on every login (storage keys); pure, bounded. */
const shaMemo = new Map<string, string>();

function sha(s: string): string {
  let h = shaMemo.get(s);
  if (h === undefined) {
    h = createHash('sha256').update(s).digest('hex');
    if (shaMemo.size >= 4096) shaMemo.clear();
    shaMemo.set(s, h);
  }
  return h;
}

/** Role names are case-insensitive and stored lower-cased (path_role.go). */
export function roleName(raw: string): string {
  if (Buffer.byteLength(raw) > 4096) throw invalid('role_name is longer than maximum of 4096 bytes');
  if (!NAME_RE.test(raw)) throw invalid('role_name', 'must be letters, digits, "_", "-" or "."');
  return raw.toLowerCase();
}

/**
 * Secret-id metadata: a JSON object string (hvac sends json.dumps), `k=v,k2=v2`, or base64 of JSON
 * (path_role.go parses with strutil.ParseArbitraryKeyValues). Values must be strings.
 */
export function parseMetadata(raw: string | undefined): Record<string, string> {
  if (raw === undefined || raw.trim() === '') return {};
  let text = raw.trim();
  if (!text.startsWith('{') && !text.includes('=')) {
    const decoded = Buffer.from(text, 'base64').toString('utf8').trim();
    if (decoded.startsWith('{')) text = decoded;
  }
  const out: Record<string, string> = {};
  if (text.startsWith('{')) {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw invalid(`failed to parse metadata: ${(e as Error).message.split('\n')[0]}`);
    }
    if (!v || typeof v !== 'object' || Array.isArray(v))
      throw invalid('failed to parse metadata: expected a JSON object');
    for (const [k, val] of Object.entries(v)) {
      if (typeof val !== 'string') throw invalid(`failed to parse metadata: value of "${k}" must be a string`);
      out[k] = val;
    }
    return out;
  }
  for (const pair of text.split(',')) {
    const i = pair.indexOf('=');
    if (i <= 0) throw invalid(`failed to parse metadata: invalid key/value pair "${pair.slice(0, 64)}"`);
    out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
  }
  return out;
}

function checkCidrs(list: string[] | undefined, message: string): string[] | undefined {
  if (list === undefined) return undefined;
  const out = list.map((c) => c.trim()).filter(Boolean);
  if (out.some((c) => !isCidr(c))) throw invalid(message);
  return out;
}

/** One AppRole mount. */
export class AppRoleEngine {
  /** Nothing to stop (EngineLifecycle). */
  async close(): Promise<void> {}

  /** Failed logins per role id (Vault's user lockout, keyed by alias); in memory, as Vault keeps it per node. */
  private readonly failures = new Map<string, { count: number; since: number; lockedUntil: number }>();

  /** Vault's user lockout defaults (5 failures, 15 minutes, counter reset 15 minutes), tunable per mount. */
  private lockout(): { threshold: number; duration: number; reset: number; disabled: boolean } {
    const c = (this.env.mount.config.user_lockout_config ?? {}) as Record<string, unknown>;
    return {
      threshold: typeof c.lockout_threshold === 'number' && c.lockout_threshold > 0 ? c.lockout_threshold : 5,
      duration: typeof c.lockout_duration === 'number' && c.lockout_duration > 0 ? c.lockout_duration : 900,
      reset: typeof c.lockout_counter_reset === 'number' && c.lockout_counter_reset > 0 ? c.lockout_counter_reset : 900,
      disabled: c.lockout_disable === true,
    };
  }

  private checkLocked(roleId: string): void {
    const f = this.failures.get(roleId);
    if (f && f.lockedUntil > this.env.clock.now()) throw denied();
  }

  /** Count a failed login of `roleId`; at the threshold the alias is locked out (403) for the duration. */
  private recordFailure(roleId: string): void {
    const cfg = this.lockout();
    if (cfg.disabled) return;
    const now = this.env.clock.now();
    let f = this.failures.get(roleId);
    if (!f || now - f.since > cfg.reset * 1000) f = { count: 0, since: now, lockedUntil: 0 };
    f.count += 1;
    if (f.count >= cfg.threshold) f.lockedUntil = now + cfg.duration * 1000;
    if (this.failures.size > 100_000) this.failures.clear();
    this.failures.set(roleId, f);
  }

  private readonly locks = new KeyedLock();

  constructor(readonly env: EngineEnv) {}

  private get storage() {
    return this.env.storage;
  }

  /** A role or null. */
  async role(name: string): Promise<RoleEntry | null> {
    return getJSON<RoleEntry>(this.storage, `role/${sha(name)}`);
  }

  /** Names of all roles. */
  async listRoles(): Promise<string[]> {
    const out: string[] = [];
    for (const n of await this.storage.list('role/')) {
      const r = await getJSON<RoleEntry>(this.storage, `role/${n}`);
      if (r) out.push(r.name);
    }
    return out.sort();
  }

  /**
   * Create or update a role (path_role.go pathRoleCreateUpdate). `mustExist` for the per-field
   * endpoints (404 `role name "<n>" doesn't exist`). Returns warnings.
   */
  async writeRole(name: string, input: RoleInput, opts: { mustExist?: boolean } = {}): Promise<string[]> {
    return this.locks.run(`role:${name}`, async () => {
      const existing = await this.role(name);
      if (!existing && opts.mustExist) throw notFound(`role name "${name}" doesn't exist`);
      const role: RoleEntry = existing ?? {
        name,
        role_id: randomUUID(),
        bind_secret_id: true,
        secret_id_bound_cidrs: [],
        secret_id_num_uses: 0,
        secret_id_ttl: 0,
        local_secret_ids: false,
        hmac_key: randomBytes(32).toString('hex'),
        ...defaultTokenParams(),
      };
      const warnings = parseTokenParams(role, input as Record<string, unknown>, this.env.mount);
      if (input.policies !== undefined && input.token_policies === undefined)
        role.legacy_policies = role.token_policies;
      if (input.period !== undefined && input.token_period === undefined) role.legacy_period = role.token_period;
      if (input.bind_secret_id !== undefined) role.bind_secret_id = input.bind_secret_id;
      const cidrs = checkCidrs(input.secret_id_bound_cidrs ?? input.bound_cidr_list, 'invalid CIDR blocks');
      if (cidrs) role.secret_id_bound_cidrs = cidrs;
      if (input.secret_id_num_uses !== undefined) {
        if (input.secret_id_num_uses < 0) throw invalid('secret_id_num_uses cannot be negative');
        role.secret_id_num_uses = input.secret_id_num_uses;
      }
      if (input.secret_id_ttl !== undefined) role.secret_id_ttl = input.secret_id_ttl;
      if (input.local_secret_ids !== undefined) {
        if (existing && input.local_secret_ids !== existing.local_secret_ids)
          throw invalid('local_secret_ids can only be modified during role creation');
        role.local_secret_ids = input.local_secret_ids;
      }
      if (!role.bind_secret_id && role.secret_id_bound_cidrs.length === 0 && role.token_bound_cidrs.length === 0) {
        throw invalid('at least one constraint should be enabled on the role');
      }
      if (input.role_id !== undefined && input.role_id !== role.role_id) {
        if (input.role_id === '') throw invalid('missing role_id');
        await this.setRoleId(role, input.role_id);
      } else if (!existing) await this.setRoleId(role, role.role_id);
      await putJSON(this.storage, `role/${sha(name)}`, role);
      return warnings;
    });
  }

  private async setRoleId(role: RoleEntry, roleId: string): Promise<void> {
    const other = await getJSON<{ name: string }>(this.storage, `role-id/${sha(roleId)}`);
    if (other && other.name !== role.name) throw conflict('role_id already in use', 400);
    if (role.role_id !== roleId) await this.storage.delete(`role-id/${sha(role.role_id)}`);
    role.role_id = roleId;
    await putJSON(this.storage, `role-id/${sha(roleId)}`, { name: role.name });
  }

  /** Set a role's role_id (POST role/:name/role-id). */
  async updateRoleId(name: string, roleId: string): Promise<void> {
    if (!roleId) throw invalid('missing role_id');
    await this.locks.run(`role:${name}`, async () => {
      const role = await this.role(name);
      if (!role) throw notFound(`role name "${name}" doesn't exist`);
      await this.setRoleId(role, roleId);
      await putJSON(this.storage, `role/${sha(name)}`, role);
    });
  }

  /** Delete a role, its role-id index and all its secret ids. */
  async deleteRole(name: string): Promise<void> {
    await this.locks.run(`role:${name}`, async () => {
      const role = await this.role(name);
      if (!role) return;
      for (const dir of [`secret-id/${sha(name)}/`, `accessor/${sha(name)}/`])
        for (const n of await this.storage.list(dir)) await this.storage.delete(dir + n);
      await this.storage.delete(`role-id/${sha(role.role_id)}`);
      await this.storage.delete(`role/${sha(name)}`);
    });
  }

  private secretKey(role: RoleEntry, secretId: string): string {
    return `secret-id/${sha(role.name)}/${createHmac('sha256', Buffer.from(role.hmac_key, 'hex')).update(secretId).digest('hex')}`;
  }

  /** Generate (or register a custom) secret id for `role`; returns the response data. */
  async createSecretId(name: string, input: SecretIdInput): Promise<Record<string, unknown>> {
    const role = await this.role(name);
    if (!role) throw notFound(`role "${name}" does not exist`);
    if (!role.bind_secret_id) throw invalid('bind_secret_id is not set on the role');
    const secretId = input.secret_id ?? randomUUID();
    if (secretId === '') throw invalid('missing secret_id');
    if (Buffer.byteLength(secretId) > 4096) throw invalid('secret_id is longer than maximum of 4096 bytes');
    const metadata = parseMetadata(input.metadata);
    const cidrList = checkCidrs(input.cidr_list, 'failed to validate CIDR blocks') ?? [];
    if (!cidrsWithin(cidrList, role.secret_id_bound_cidrs))
      throw invalid("failed to validate CIDR blocks: given CIDRs are not a subset of the role's secret_id_bound_cidrs");
    const tokenCidrs = checkCidrs(input.token_bound_cidrs, 'failed to validate CIDR blocks') ?? [];
    if (!cidrsWithin(tokenCidrs, role.token_bound_cidrs))
      throw invalid(
        "failed to validate CIDR blocks: given token_bound_cidrs are not a subset of the role's token_bound_cidrs",
      );
    let numUses = role.secret_id_num_uses;
    if (input.num_uses !== undefined) {
      if (input.num_uses < 0) throw invalid('num_uses cannot be negative');
      if (role.secret_id_num_uses > 0 && (input.num_uses === 0 || input.num_uses > role.secret_id_num_uses))
        throw invalid("num_uses cannot be higher than the role's secret_id_num_uses");
      numUses = input.num_uses;
    }
    let ttl = role.secret_id_ttl;
    if (input.ttl !== undefined) {
      if (role.secret_id_ttl > 0 && (input.ttl === 0 || input.ttl > role.secret_id_ttl))
        throw invalid("ttl cannot be longer than the role's secret_id_ttl");
      ttl = input.ttl;
    }
    // Secret-id TTLs are capped by the mount's max lease TTL (Vault issue 8020).
    const max = mountMaxTtl(this.env.mount);
    if (ttl > max) ttl = max;
    const key = this.secretKey(role, secretId);
    const accessor = randomUUID();
    const nowMs = this.env.clock.now();
    const now = new Date(nowMs).toISOString();
    await this.locks.run(key, async () => {
      if (await this.storage.get(key)) throw conflict('SecretID is already registered', 400);
      const entry: SecretIdEntry = {
        secret_id_accessor: accessor,
        secret_id_num_uses: numUses,
        secret_id_ttl: ttl,
        creation_time: now,
        expiration_time: ttl ? new Date(nowMs + ttl * 1000).toISOString() : ZERO_TIME,
        last_updated_time: now,
        metadata,
        cidr_list: cidrList,
        token_bound_cidrs: tokenCidrs,
      };
      await putJSON(this.storage, key, entry);
      await putJSON(this.storage, `accessor/${sha(role.name)}/${sha(accessor)}`, { key });
    });
    return { secret_id: secretId, secret_id_accessor: accessor, secret_id_ttl: ttl, secret_id_num_uses: numUses };
  }

  /** Accessors of a role's secret ids. */
  async listSecretIds(name: string): Promise<string[]> {
    const role = await this.role(name);
    if (!role) throw invalid(`role "${name}" does not exist`);
    const out: string[] = [];
    for (const n of await this.storage.list(`accessor/${sha(name)}/`)) {
      const ref = await getJSON<{ key: string }>(this.storage, `accessor/${sha(name)}/${n}`);
      const e = ref && (await getJSON<SecretIdEntry>(this.storage, ref.key));
      if (e) out.push(e.secret_id_accessor);
    }
    return out.sort();
  }

  private expired(e: SecretIdEntry): boolean {
    return e.expiration_time !== ZERO_TIME && Date.parse(e.expiration_time) <= this.env.clock.now();
  }

  /** Lookup view of a secret id entry. */
  static view(e: SecretIdEntry): Record<string, unknown> {
    return { ...e };
  }

  /** A secret id's entry by the id itself, or null. */
  async lookupSecretId(name: string, secretId: string): Promise<SecretIdEntry | null> {
    const role = await this.role(name);
    if (!role) throw invalid(`role "${name}" does not exist`);
    const e = await getJSON<SecretIdEntry>(this.storage, this.secretKey(role, secretId));
    return e && !this.expired(e) ? e : null;
  }

  /** A secret id's entry by accessor, or null. */
  async lookupAccessor(name: string, accessor: string): Promise<SecretIdEntry | null> {
    const role = await this.role(name);
    if (!role) throw invalid(`role "${name}" does not exist`);
    const ref = await getJSON<{ key: string }>(this.storage, `accessor/${sha(name)}/${sha(accessor)}`);
    return ref ? getJSON<SecretIdEntry>(this.storage, ref.key) : null;
  }

  /** Destroy by secret id (unknown: nothing). */
  async destroySecretId(name: string, secretId: string): Promise<void> {
    const role = await this.role(name);
    if (!role) throw invalid(`role "${name}" does not exist`);
    const key = this.secretKey(role, secretId);
    await this.locks.run(key, async () => {
      const e = await getJSON<SecretIdEntry>(this.storage, key);
      if (!e) return;
      await this.storage.delete(`accessor/${sha(name)}/${sha(e.secret_id_accessor)}`);
      await this.storage.delete(key);
    });
  }

  /** Destroy by accessor; unknown accessor is an error as in Vault. */
  async destroyAccessor(name: string, accessor: string): Promise<void> {
    const role = await this.role(name);
    if (!role) throw invalid(`role "${name}" does not exist`);
    const ref = await getJSON<{ key: string }>(this.storage, `accessor/${sha(name)}/${sha(accessor)}`);
    if (!ref) throw invalid(`failed to find accessor entry for secret_id_accessor: ${JSON.stringify(accessor)}`);
    await this.locks.run(ref.key, async () => {
      await this.storage.delete(ref.key);
      await this.storage.delete(`accessor/${sha(name)}/${sha(accessor)}`);
    });
  }

  /** Remove expired secret ids of every role (tidy/secret-id); returns how many. */
  async tidy(): Promise<number> {
    let n = 0;
    for (const roleHash of await this.storage.list('accessor/')) {
      const dir = `accessor/${roleHash}`;
      for (const a of await this.storage.list(dir)) {
        const ref = await getJSON<{ key: string }>(this.storage, dir + a);
        const e = ref && (await getJSON<SecretIdEntry>(this.storage, ref.key));
        if (!e || this.expired(e)) {
          if (ref) await this.storage.delete(ref.key);
          await this.storage.delete(dir + a);
          n++;
        }
      }
    }
    return n;
  }

  /** The role a login request names through its role_id (role-based rate-limit quotas, Vault's ResolveRoleOperation). */
  async resolveLoginRole(data: Record<string, unknown>): Promise<string | undefined> {
    const roleId = data.role_id;
    if (typeof roleId !== 'string' || roleId === '') return undefined;
    return (await getJSON<{ name: string }>(this.storage, `role-id/${sha(roleId)}`))?.name;
  }

  /**
   * Log in (path_login.go): role by role_id, then the secret id with its CIDR binding and use count,
   * then the role's CIDR binding; the token store issues the token. All refusals are 400 with Vault's text.
   */
  async login(roleId: string | undefined, secretId: string | undefined, remoteAddress: string) {
    if (!roleId) throw invalid('missing role_id');
    const ref = await getJSON<{ name: string }>(this.storage, `role-id/${sha(roleId)}`);
    const role = ref && (await this.role(ref.name));
    if (!role || role.role_id !== roleId) throw invalid('invalid role or secret ID');
    this.checkLocked(roleId);
    try {
      return await this.loginAs(role, roleId, secretId, remoteAddress);
    } catch (e) {
      // Wrong secret ids count towards the lockout of this role id (Vault's user lockout).
      if ((e as Error).message === 'invalid role or secret ID') this.recordFailure(roleId);
      throw e;
    }
  }

  private async loginAs(role: RoleEntry, roleId: string, secretId: string | undefined, remoteAddress: string) {
    const ip = remoteAddress === 'unix' ? '127.0.0.1' : remoteAddress.replace(/^::ffff:(?=\d+\.)/, '');
    let metadata: Record<string, string> = {};
    let tokenCidrs = role.token_bound_cidrs;
    if (role.bind_secret_id) {
      if (!secretId) throw invalid('missing secret_id');
      const key = this.secretKey(role, secretId);
      const check = async (e: SecretIdEntry | null): Promise<void> => {
        if (!e) throw invalid('invalid role or secret ID');
        if (this.expired(e)) {
          await this.storage.delete(`accessor/${sha(role.name)}/${sha(e.secret_id_accessor)}`);
          await this.storage.delete(key);
          throw invalid('invalid role or secret ID');
        }
        if (e.cidr_list.length && !addressAllowed(ip, e.cidr_list)) {
          throw invalid(
            e.secret_id_num_uses === 0
              ? `source address ${JSON.stringify(ip)} unauthorized through CIDR restrictions on the secret ID`
              : `source address ${JSON.stringify(ip)} unauthorized by CIDR restrictions on the secret ID: %!w(<nil>)`,
          );
        }
        if (e.secret_id_num_uses === 1) {
          await this.storage.delete(`accessor/${sha(role.name)}/${sha(e.secret_id_accessor)}`);
          await this.storage.delete(key);
        } else if (e.secret_id_num_uses > 1) {
          e.secret_id_num_uses -= 1;
          e.last_updated_time = new Date(this.env.clock.now()).toISOString();
          await putJSON(this.storage, key, e);
        }
        metadata = { ...e.metadata };
        if (e.token_bound_cidrs.length) tokenCidrs = e.token_bound_cidrs;
      };
      // An unlimited, unexpired secret id is only read: no lock, so logins with one secret id run in
      // parallel (Vault takes only the read lock there). Counted uses and expiry clean-up are writes:
      // they run under the secret id's lock on a fresh read, so no use is counted twice.
      const seen = await getJSON<SecretIdEntry>(this.storage, key);
      if (seen && seen.secret_id_num_uses === 0 && !this.expired(seen)) await check(seen);
      else await this.locks.run(key, async () => check(await getJSON<SecretIdEntry>(this.storage, key)));
    }
    if (role.secret_id_bound_cidrs.length && !addressAllowed(ip, role.secret_id_bound_cidrs)) {
      throw invalid(`source address ${JSON.stringify(ip)} unauthorized by CIDR restrictions on the role: %!w(<nil>)`);
    }
    metadata.role_name = role.name;
    this.failures.delete(roleId);
    const mountPath = this.env.mount.path;
    const issue = this.env.core.issueLoginToken;
    if (!issue) throw new Error('token store unavailable');
    return issue.call(
      this.env.core,
      this.env.mount,
      loginAuthOf(role, {
        path: `${mountPath}login`,
        displayName: '',
        metadata,
        alias: { name: role.role_id, metadata },
        role: role.name,
        boundCidrs: tokenCidrs,
      }),
    );
  }
}
