/**
 * Login MFA with TOTP (Vault's vault/login_mfa.go, identity/mfa/ and sys/mfa/validate): TOTP methods,
 * per-entity secrets made by admin-generate (or by the entity itself with generate), login
 * enforcements that pick logins by auth mount accessor or type, entity or group; a login they pick
 * answers `mfa_requirement` instead of a token, and the token is issued only when every enforcement
 * is satisfied through sys/mfa/validate (or the X-Vault-MFA header on the login). A code is
 * accepted once per period; after `max_validation_attempts` failures the entity is refused for a
 * period without checking codes. Pending logins live in memory on the node that answered them
 * (Vault does the same), for five minutes.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, IssuedLogin, MountInfo } from '../../framework/context.js';
import { conflict, denied, invalid, notFound } from '../../framework/errors.js';
import { getJSON, putJSON, type Storage } from '../../storage/backend.js';
import { type EntityDirectory, entityGroupIds } from './entity-groups.js';
import { TOTP_ALGORITHMS, type TotpAlgorithm, type TotpParams, newTotpSecret, otpauthUrl, totpMatch } from './totp.js';

/** A TOTP method (identity/mfa/method/totp/:id). */
export interface TotpMethod extends TotpParams {
  id: string;
  name: string;
  type: 'totp';
  issuer: string;
  key_size: number;
  qr_size: number;
  max_validation_attempts: number;
  creation_time: string;
  update_time: string;
}

/** A login enforcement (identity/mfa/login-enforcement/:name). */
export interface Enforcement {
  name: string;
  id: string;
  mfa_method_ids: string[];
  auth_method_accessors: string[];
  auth_method_types: string[];
  identity_group_ids: string[];
  identity_entity_ids: string[];
}

interface Pending {
  entityId: string;
  constraints: Enforcement[];
  finish: () => Promise<IssuedLogin>;
  expires: number;
}

/** How login-tokens.ts asks whether a login needs MFA before its token is issued. */
export interface LoginGate {
  /** The `mfa_requirement` answer when an enforcement applies (the token waits), else null. */
  requirement(mount: MountInfo, entityId: string, finish: () => Promise<IssuedLogin>): Promise<IssuedLogin | null>;
}

/** Vault's warning on an answer that carries an MFA requirement. */
export const MFA_WARNING =
  'A login request was issued that is subject to MFA validation. Please make sure to validate the login by sending another request to mfa/validate endpoint.';

const PENDING_MS = 5 * 60_000;
const MAX_PENDING = 10_000;
const METHOD_DEFAULTS = {
  period: 30,
  key_size: 20,
  qr_size: 200,
  algorithm: 'SHA1' as TotpAlgorithm,
  digits: 6,
  skew: 1,
  max_validation_attempts: 5,
};

/** The MFA store of one keyhold. */
export class LoginMfa implements LoginGate {
  private readonly pending = new Map<string, Pending>();
  /** Codes spent, by method, entity and code, until the end of their acceptance window. */
  private readonly used = new Map<string, number>();
  /** Failed validations by method and entity. */
  private readonly failures = new Map<string, { count: number; until: number }>();
  /** Enforcements as last read (every login asks; most keyholds have none). */
  private cached: Enforcement[] | null = null;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly identity: EntityDirectory,
    private readonly mountExists: (accessor: string) => boolean,
  ) {}

  // ---- methods

  method(id: string): Promise<TotpMethod | null> {
    return getJSON<TotpMethod>(this.storage, `method/${id}`);
  }

  async methods(): Promise<TotpMethod[]> {
    const out: TotpMethod[] = [];
    for (const id of await this.storage.list('method/')) {
      const m = await this.method(id);
      if (m) out.push(m);
    }
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Create (no id) or update a TOTP method; returns its id. */
  async writeMethod(id: string | null, input: Record<string, unknown>): Promise<string> {
    const now = new Date(this.clock.now()).toISOString();
    const existing = id ? await this.method(id) : null;
    if (id && !existing) throw notFound(`no TOTP method with id "${id}"`);
    const m: TotpMethod = existing ?? {
      id: randomUUID(),
      name: '',
      type: 'totp',
      issuer: '',
      ...METHOD_DEFAULTS,
      creation_time: now,
      update_time: now,
    };
    if (typeof input.issuer === 'string') m.issuer = input.issuer.trim();
    if (!m.issuer) throw invalid('issuer', 'must be set');
    if (typeof input.method_name === 'string' && input.method_name !== m.name) {
      if (input.method_name && (await this.methods()).some((x) => x.name === input.method_name && x.id !== m.id))
        throw invalid('method_name', `"${input.method_name}" is already used by another method`);
      m.name = input.method_name;
    }
    const int = (
      k: 'period' | 'key_size' | 'qr_size' | 'digits' | 'skew' | 'max_validation_attempts',
      ok: (n: number) => boolean,
      rule: string,
    ) => {
      const v = input[k];
      if (v === undefined) return;
      if (typeof v !== 'number' || !Number.isInteger(v) || !ok(v)) throw invalid(k, rule);
      m[k] = v;
    };
    int('period', (n) => n > 0 && n <= 3600, 'must be a number of seconds between 1 and 3600');
    int('key_size', (n) => n >= 10 && n <= 64, 'must be between 10 and 64 bytes');
    int('qr_size', (n) => n >= 0, 'must not be negative');
    int('digits', (n) => n === 6 || n === 8, 'must be 6 or 8');
    int('skew', (n) => n === 0 || n === 1, 'must be 0 or 1');
    int('max_validation_attempts', (n) => n >= 0, 'must not be negative');
    if (m.max_validation_attempts === 0) m.max_validation_attempts = METHOD_DEFAULTS.max_validation_attempts;
    if (input.algorithm !== undefined) {
      const a = String(input.algorithm).toUpperCase();
      if (!(a in TOTP_ALGORITHMS)) throw invalid('algorithm', 'must be SHA1, SHA256 or SHA512');
      m.algorithm = a as TotpAlgorithm;
    }
    m.update_time = now;
    await putJSON(this.storage, `method/${m.id}`, m);
    return m.id;
  }

  async deleteMethod(id: string): Promise<void> {
    const users = (await this.enforcements()).filter((e) => e.mfa_method_ids.includes(id));
    if (users.length) throw invalid(`method is used by login enforcement "${users[0]!.name}"`);
    for (const e of await this.storage.list(`secret/${id}/`)) await this.storage.delete(`secret/${id}/${e}`);
    await this.storage.delete(`method/${id}`);
  }

  /** A method by id or by name. */
  private async methodByIdOrName(key: string): Promise<TotpMethod | null> {
    return (await this.method(key)) ?? (await this.methods()).find((m) => m.name !== '' && m.name === key) ?? null;
  }

  // ---- secrets

  /**
   * A new secret for `entityId` on method `methodId` (admin-generate, or generate for the token's own
   * entity); null when the entity already has one (Vault answers with a warning then).
   */
  async generate(methodId: string, entityId: string): Promise<{ url: string; barcode: string } | null> {
    if (!entityId) throw invalid('entity_id', 'must be set (the token has no entity)');
    const m = await this.method(methodId);
    if (!m) throw invalid('method_id', `no TOTP method with id "${methodId}"`);
    const entity = await this.identity.entity(entityId);
    if (!entity) throw invalid('entity_id', `no entity with id "${entityId}"`);
    const key = `secret/${m.id}/${entityId}`;
    if (await this.storage.get(key)) return null;
    const secret = newTotpSecret(m.key_size);
    await putJSON(this.storage, key, { secret });
    // A QR code needs an encoder keyhold does not ship; the URL is what authenticator apps import.
    return { url: otpauthUrl(m.issuer, entity.name, secret, m), barcode: '' };
  }

  /** Remove an entity's secret (admin-destroy). */
  async destroy(methodId: string, entityId: string): Promise<void> {
    if (!entityId) throw invalid('entity_id', 'must be set');
    if (!(await this.method(methodId))) throw invalid('method_id', `no TOTP method with id "${methodId}"`);
    await this.storage.delete(`secret/${methodId}/${entityId}`);
    this.failures.delete(`${methodId}/${entityId}`);
  }

  // ---- enforcements

  enforcement(name: string): Promise<Enforcement | null> {
    return getJSON<Enforcement>(this.storage, `enforcement/${name}`);
  }

  /** Another node changed MFA records: read the enforcements again at the next login. */
  forget(): void {
    this.cached = null;
  }

  /** EngineLifecycle: a record under the MFA prefix changed elsewhere. */
  invalidate(): void {
    this.forget();
  }

  async enforcements(): Promise<Enforcement[]> {
    if (this.cached) return this.cached;
    const out: Enforcement[] = [];
    for (const n of await this.storage.list('enforcement/')) {
      const e = await this.enforcement(n);
      if (e) out.push(e);
    }
    this.cached = out;
    return out;
  }

  async writeEnforcement(
    name: string,
    input: Partial<Record<Exclude<keyof Enforcement, 'name' | 'id'>, string[]>>,
  ): Promise<void> {
    const existing = await this.enforcement(name);
    const e: Enforcement = existing ?? {
      name,
      id: randomUUID(),
      mfa_method_ids: [],
      auth_method_accessors: [],
      auth_method_types: [],
      identity_group_ids: [],
      identity_entity_ids: [],
    };
    for (const k of [
      'mfa_method_ids',
      'auth_method_accessors',
      'auth_method_types',
      'identity_group_ids',
      'identity_entity_ids',
    ] as const) {
      if (input[k] !== undefined) e[k] = [...new Set(input[k]!.map((x) => x.trim()).filter(Boolean))];
    }
    if (e.mfa_method_ids.length === 0) throw invalid('mfa_method_ids', 'missing method ids');
    for (const id of e.mfa_method_ids)
      if (!(await this.method(id))) throw invalid('mfa_method_ids', `no MFA method with id "${id}"`);
    for (const a of e.auth_method_accessors)
      if (!this.mountExists(a)) throw invalid('auth_method_accessors', `no auth mount with accessor "${a}"`);
    if (
      !e.auth_method_accessors.length &&
      !e.auth_method_types.length &&
      !e.identity_group_ids.length &&
      !e.identity_entity_ids.length
    ) {
      throw invalid(
        'One of auth_method_accessors, auth_method_types, identity_group_ids, identity_entity_ids must be specified',
      );
    }
    await putJSON(this.storage, `enforcement/${name}`, e);
    this.cached = null;
  }

  async deleteEnforcement(name: string): Promise<void> {
    await this.storage.delete(`enforcement/${name}`);
    this.cached = null;
  }

  // ---- the login stage

  private sweep(now: number): void {
    for (const [k, p] of this.pending) if (p.expires <= now) this.pending.delete(k);
    for (const [k, until] of this.used) if (until <= now) this.used.delete(k);
  }

  async requirement(
    mount: MountInfo,
    entityId: string,
    finish: () => Promise<IssuedLogin>,
  ): Promise<IssuedLogin | null> {
    const all = await this.enforcements();
    if (all.length === 0) return null;
    const groups = new Set(
      all.some((e) => e.identity_group_ids.length) ? await entityGroupIds(this.identity, entityId) : [],
    );
    const applies = all.filter(
      (e) =>
        e.auth_method_accessors.includes(mount.accessor) ||
        e.auth_method_types.includes(mount.type) ||
        e.identity_entity_ids.includes(entityId) ||
        e.identity_group_ids.some((g) => groups.has(g)),
    );
    if (applies.length === 0) return null;
    const now = this.clock.now();
    this.sweep(now);
    const id = randomUUID();
    // Bounded: only a correct first factor makes one, but a script with a password could make many.
    if (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
    this.pending.set(id, { entityId, constraints: applies, finish, expires: now + PENDING_MS });
    const constraints: Record<string, { any: Array<Record<string, unknown>> }> = {};
    for (const e of applies) {
      const any: Array<Record<string, unknown>> = [];
      for (const mid of e.mfa_method_ids) {
        const m = await this.method(mid);
        if (m) any.push({ type: m.type, id: m.id, uses_passcode: true, name: m.name });
      }
      constraints[e.name] = { any };
    }
    return {
      auth: {
        client_token: '',
        accessor: '',
        policies: null,
        token_policies: null,
        metadata: null,
        lease_duration: 0,
        renewable: false,
        entity_id: '',
        token_type: '',
        orphan: false,
        mfa_requirement: { mfa_request_id: id, mfa_constraints: constraints },
        num_uses: 0,
      },
      warnings: [MFA_WARNING],
    };
  }

  /**
   * Complete a pending login (sys/mfa/validate): `payload` maps method ids (or names) to passcodes;
   * every enforcement must be satisfied by one of its methods. The pending login is spent on success.
   */
  async validate(requestId: string, payload: Record<string, unknown>): Promise<IssuedLogin> {
    if (!requestId) throw invalid('mfa_request_id', 'missing');
    const now = this.clock.now();
    this.sweep(now);
    const p = this.pending.get(requestId);
    if (!p) throw invalid('mfa_request_id', 'no pending login with this id (it may have expired)');
    const given = new Map<string, string>();
    for (const [k, v] of Object.entries(payload ?? {})) {
      const code = Array.isArray(v) ? v[0] : v;
      if (typeof code !== 'string') throw invalid(`mfa_payload.${k}`, 'must be a list holding one passcode');
      const m = await this.methodByIdOrName(k);
      if (m) given.set(m.id, code);
    }
    for (const e of p.constraints) {
      const candidates = e.mfa_method_ids.filter((id) => given.has(id));
      if (candidates.length === 0)
        throw invalid(`mfa_payload: no passcode for the methods of login enforcement "${e.name}"`);
      let lastError = '';
      let ok = false;
      for (const id of candidates) {
        try {
          await this.checkTotp(id, p.entityId, given.get(id)!, now);
          ok = true;
          break;
        } catch (err) {
          lastError = (err as Error).message;
        }
      }
      if (!ok) throw denied(`failed to satisfy enforcement ${e.name}. error: ${lastError}`);
    }
    if (!this.pending.delete(requestId)) throw conflict('this login was already completed', 400);
    return p.finish();
  }

  private async checkTotp(methodId: string, entityId: string, code: string, now: number): Promise<void> {
    const m = await this.method(methodId);
    if (!m) throw new Error(`MFA method "${methodId}" no longer exists`);
    const secret = await getJSON<{ secret: string }>(this.storage, `secret/${methodId}/${entityId}`);
    if (!secret)
      throw new Error(
        'entity does not have a TOTP secret for this method (ask an administrator to run admin-generate)',
      );
    const key = `${methodId}/${entityId}`;
    const f = this.failures.get(key);
    if (f && f.count >= m.max_validation_attempts && f.until > now) {
      throw new Error(
        `maximum TOTP validation attempts ${f.count} exceeded the allowed attempts ${m.max_validation_attempts}. Please try again in ${Math.ceil((f.until - now) / 1000)} seconds`,
      );
    }
    const step = totpMatch(code.trim(), secret.secret, now, m);
    if (step === null) {
      const cur = f && f.until > now ? f : { count: 0, until: 0 };
      cur.count += 1;
      cur.until = now + m.period * 1000;
      this.failures.set(key, cur);
      throw new Error('failed to validate TOTP passcode');
    }
    const usedKey = `${key}/${step}`;
    if (this.used.has(usedKey)) {
      const next = (step + 1) * m.period * 1000 - now;
      throw new Error(`code already used; new code is available in ${Math.max(1, Math.ceil(next / 1000))} seconds`);
    }
    // Spent until the step can no longer be accepted (its own period plus the skew after it).
    this.used.set(usedKey, (step + 1 + m.skew) * m.period * 1000);
    this.failures.delete(key);
  }

  /**
   * The X-Vault-MFA header of a login (Vault's single-phase login): `<method id or name>:<passcode>`,
   * one per method; the pending login `requestId` is validated with them.
   */
  async validateHeader(requestId: string, header: string | string[]): Promise<IssuedLogin> {
    const payload: Record<string, string[]> = {};
    for (const h of (Array.isArray(header) ? header : [header]).flatMap((x) => x.split(','))) {
      const i = h.indexOf(':');
      if (i <= 0) throw invalid('X-Vault-MFA', 'must be "<method id or name>:<passcode>"');
      payload[h.slice(0, i).trim()] = [h.slice(i + 1).trim()];
    }
    return this.validate(requestId, payload);
  }

  /** Whether a method with this id exists (for reads that answer 404). */
  async has(id: string): Promise<boolean> {
    return (await this.method(id)) !== null;
  }
}

/** The read view of a method (identity/mfa/method/totp/:id). */
export function methodView(m: TotpMethod): Record<string, unknown> {
  return {
    algorithm: m.algorithm,
    creation_time: m.creation_time,
    digits: m.digits,
    id: m.id,
    issuer: m.issuer,
    key_size: m.key_size,
    max_validation_attempts: m.max_validation_attempts,
    mount_accessor: '',
    name: m.name,
    namespace_id: 'root',
    namespace_path: '',
    period: m.period,
    qr_size: m.qr_size,
    skew: m.skew,
    type: m.type,
    update_time: m.update_time,
  };
}
