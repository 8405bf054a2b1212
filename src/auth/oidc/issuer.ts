/**
 * keyhold as an OIDC issuer (Vault's identity tokens, vault/identity_store_oidc.go): named signing
 * keys with a rotation period and a verification TTL, roles that bind a key, a claims template, a
 * client id and a TTL, signed identity tokens for the entity of the calling token, their
 * introspection, and the discovery document and JWKS that verifiers fetch.
 *
 * Each key keeps three parts: `current` signs; `next` is published ahead of its use (verifiers that
 * cache the JWKS already know it when it starts signing); `retired` public keys stay published for
 * `verification_ttl` after they stop signing, so a token issued just before a rotation still verifies.
 * Private keys are stored as PKCS#8 PEM behind the barrier and never leave this file's storage.
 */
import { randomInt, type KeyObject } from 'node:crypto';
import { SignJWT, createLocalJWKSet, jwtVerify } from 'jose';
import type { Clock, Logger } from '../../framework/context.js';
import { invalid } from '../../framework/errors.js';
import { getJSON, putJSON, type Storage } from '../../storage/backend.js';
import { KeyedLock } from '../../framework/keyed-lock.js';
import {
  generateSigningKey,
  privateKeyOf,
  type OidcAlgorithm,
  type PublicJwk,
  type SigningKey,
} from './signing-keys.js';
import { renderClaims, type TemplateIdentity } from './claims-template.js';

/** Vault's defaults: rotate daily, publish retired keys a day, tokens live a day. */
export const DEFAULT_ROTATION_PERIOD = 24 * 3600;
export const DEFAULT_VERIFICATION_TTL = 24 * 3600;
export const DEFAULT_TOKEN_TTL = 24 * 3600;
/** Where tokens are said to come from when neither `issuer` nor `api_addr` is configured. */
export const FALLBACK_ISSUER_BASE = 'http://127.0.0.1:8200';
/** The path under the API that the issuer URL ends with. */
export const ISSUER_PATH = '/v1/identity/oidc';

/** A stored named key. */
export interface OidcKeyRecord {
  name: string;
  algorithm: OidcAlgorithm;
  rotation_period: number;
  verification_ttl: number;
  allowed_client_ids: string[];
  current: SigningKey;
  next: SigningKey;
  retired: Array<{ jwk: PublicJwk; until: number }>;
  /** Unix ms of the next automatic rotation. */
  next_rotation: number;
}

/** A stored role. */
export interface OidcRoleRecord {
  name: string;
  key: string;
  template: string;
  client_id: string;
  ttl: number;
}

/** What the issuer needs of the entity a token is for. */
export type TokenSubject = TemplateIdentity;

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function clientId(): string {
  let s = '';
  for (let i = 0; i < 26; i++) s += B62[randomInt(62)];
  return s;
}

/** Named keys, roles, token signing and verification. */
export class OidcIssuer {
  private readonly locks = new KeyedLock();
  /** Private KeyObjects by kid (parsing a PEM costs more than signing with an EC key). */
  private readonly privateKeys = new Map<string, KeyObject>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** The server's api_addr, the issuer's base when `identity/oidc/config` sets none. */
    private readonly apiAddr: () => string | undefined,
  ) {}

  // ---- issuer ---------------------------------------------------------------------------------

  /** The configured issuer base ("" when unset). */
  async configuredIssuer(): Promise<string> {
    return (await getJSON<{ issuer: string }>(this.storage, 'oidc/config'))?.issuer ?? '';
  }

  async setIssuer(issuer: string): Promise<void> {
    if (issuer !== '') {
      let u: URL;
      try {
        u = new URL(issuer);
      } catch {
        throw invalid('issuer', `invalid issuer URL "${issuer}"`);
      }
      if (u.protocol !== 'https:' && u.protocol !== 'http:')
        throw invalid('issuer', 'the issuer must be an http or https URL');
      if (u.search || u.hash || (u.pathname !== '/' && u.pathname !== ''))
        throw invalid(
          'issuer',
          'the issuer must be a scheme, host and optional port, without a path, query or fragment',
        );
      issuer = `${u.protocol}//${u.host}`;
    }
    await putJSON(this.storage, 'oidc/config', { issuer });
  }

  /** The `iss` of every token: the configured issuer (else api_addr) + /v1/identity/oidc. */
  async issuer(): Promise<string> {
    const base = (await this.configuredIssuer()) || this.apiAddr() || FALLBACK_ISSUER_BASE;
    return base.replace(/\/+$/, '') + ISSUER_PATH;
  }

  // ---- keys -----------------------------------------------------------------------------------

  async key(name: string): Promise<OidcKeyRecord | null> {
    return getJSON<OidcKeyRecord>(this.storage, `oidc/key/${name}`);
  }

  async keyNames(): Promise<string[]> {
    return (await this.storage.list('oidc/key/')).filter((n) => !n.endsWith('/')).sort();
  }

  /** Create or update a key; a changed algorithm makes new signing keys at once (as Vault rotates). */
  async putKey(
    name: string,
    opts: {
      algorithm?: OidcAlgorithm;
      rotation_period?: number;
      verification_ttl?: number;
      allowed_client_ids?: string[];
    },
  ): Promise<void> {
    await this.locks.run(`key/${name}`, async () => {
      const now = this.clock.now();
      const old = await this.key(name);
      const algorithm = opts.algorithm ?? old?.algorithm ?? 'RS256';
      const rotation = opts.rotation_period ?? old?.rotation_period ?? DEFAULT_ROTATION_PERIOD;
      const verification = opts.verification_ttl ?? old?.verification_ttl ?? DEFAULT_VERIFICATION_TTL;
      if (rotation < 60) throw invalid('rotation_period', 'must be at least one minute');
      if (verification < 0) throw invalid('verification_ttl', 'must not be negative');
      if (opts.verification_ttl !== undefined && old) {
        const roles = await this.rolesUsing(name);
        const longer = roles.filter((r) => r.ttl > verification);
        if (longer.length)
          throw invalid(
            'verification_ttl',
            `a key's verification_ttl cannot be shorter than the ttl of a role that references it (${longer.map((r) => r.name).join(', ')})`,
          );
      }
      let rec: OidcKeyRecord;
      if (!old || old.algorithm !== algorithm) {
        const [current, next] = await Promise.all([generateSigningKey(algorithm), generateSigningKey(algorithm)]);
        const retired = old
          ? [
              ...this.liveRetired(old, now),
              { jwk: old.current.jwk, until: now + verification * 1000 },
              { jwk: old.next.jwk, until: now + verification * 1000 },
            ]
          : [];
        rec = {
          name,
          algorithm,
          rotation_period: rotation,
          verification_ttl: verification,
          allowed_client_ids: [],
          current,
          next,
          retired,
          next_rotation: now + rotation * 1000,
        };
      } else {
        rec = { ...old, rotation_period: rotation, verification_ttl: verification };
        if (opts.rotation_period !== undefined) rec.next_rotation = now + rotation * 1000;
      }
      rec.allowed_client_ids = opts.allowed_client_ids ?? old?.allowed_client_ids ?? [];
      await putJSON(this.storage, `oidc/key/${name}`, rec);
    });
    this.rearm();
  }

  /** Delete a key no role references. */
  async deleteKey(name: string): Promise<void> {
    const roles = await this.rolesUsing(name);
    if (roles.length)
      throw invalid(
        `unable to delete key "${name}" because it is currently referenced by these roles: ${roles.map((r) => r.name).join(', ')}`,
      );
    await this.storage.delete(`oidc/key/${name}`);
  }

  /** Rotate: `next` starts signing, a fresh `next` is made, the old current stays published `verificationTtl`. */
  async rotate(name: string, verificationTtl?: number): Promise<void> {
    await this.locks.run(`key/${name}`, async () => {
      const rec = await this.key(name);
      if (!rec) throw invalid(`no named key found at "${name}"`);
      await this.rotateLocked(rec, verificationTtl ?? rec.verification_ttl);
    });
    this.rearm();
  }

  private async rotateLocked(rec: OidcKeyRecord, verificationTtl: number): Promise<void> {
    const now = this.clock.now();
    const fresh = await generateSigningKey(rec.algorithm);
    rec.retired = [...this.liveRetired(rec, now), { jwk: rec.current.jwk, until: now + verificationTtl * 1000 }];
    this.privateKeys.delete(rec.current.kid);
    rec.current = rec.next;
    rec.next = fresh;
    rec.next_rotation = now + rec.rotation_period * 1000;
    await putJSON(this.storage, `oidc/key/${rec.name}`, rec);
    this.logger.info('identity token key rotated', { key: rec.name });
  }

  private liveRetired(rec: OidcKeyRecord, now: number): OidcKeyRecord['retired'] {
    return rec.retired.filter((r) => r.until > now);
  }

  /** Every public key verifiers may need: each key's current and next, and retired ones still in their verification TTL. */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    const now = this.clock.now();
    const keys: PublicJwk[] = [];
    for (const name of await this.keyNames()) {
      const rec = await this.key(name);
      if (!rec) continue;
      keys.push(rec.current.jwk, rec.next.jwk, ...this.liveRetired(rec, now).map((r) => r.jwk));
    }
    return { keys };
  }

  // ---- roles ----------------------------------------------------------------------------------

  async role(name: string): Promise<OidcRoleRecord | null> {
    return getJSON<OidcRoleRecord>(this.storage, `oidc/role/${name}`);
  }

  async roleNames(): Promise<string[]> {
    return (await this.storage.list('oidc/role/')).filter((n) => !n.endsWith('/')).sort();
  }

  private async rolesUsing(key: string): Promise<OidcRoleRecord[]> {
    const out: OidcRoleRecord[] = [];
    for (const n of await this.roleNames()) {
      const r = await this.role(n);
      if (r?.key === key) out.push(r);
    }
    return out;
  }

  /** Create or update a role (the client id is made once and kept). */
  async putRole(
    name: string,
    opts: { key?: string; template?: string; ttl?: number; client_id?: string },
  ): Promise<void> {
    const old = await this.role(name);
    const key = opts.key ?? old?.key;
    if (!key) throw invalid('key', 'the key parameter is required');
    let keyRec = await this.key(key);
    // Vault makes the "default" key on first reference.
    if (!keyRec && key === 'default') {
      await this.putKey('default', { allowed_client_ids: ['*'] });
      keyRec = await this.key(key);
    }
    if (!keyRec) throw invalid('key', `key "${key}" does not exist`);
    const ttl = opts.ttl ?? old?.ttl ?? DEFAULT_TOKEN_TTL;
    if (ttl > keyRec.verification_ttl)
      throw invalid('ttl', "a role's token ttl cannot be longer than the verification_ttl of the key it references");
    const rec: OidcRoleRecord = {
      name,
      key,
      template: opts.template ?? old?.template ?? '',
      client_id: old?.client_id ?? opts.client_id ?? clientId(),
      ttl,
    };
    await putJSON(this.storage, `oidc/role/${name}`, rec);
  }

  async deleteRole(name: string): Promise<void> {
    await this.storage.delete(`oidc/role/${name}`);
  }

  // ---- tokens ---------------------------------------------------------------------------------

  /** A signed identity token of `role` for `subject`. */
  async issue(roleName: string, subject: TokenSubject): Promise<{ client_id: string; token: string; ttl: number }> {
    const role = await this.role(roleName);
    if (!role) throw invalid(`role "${roleName}" not found`);
    const key = await this.key(role.key);
    if (!key) throw invalid(`key "${role.key}" not found`);
    if (!key.allowed_client_ids.includes('*') && !key.allowed_client_ids.includes(role.client_id)) {
      throw invalid(
        `the key "${role.key}" does not list the client ID of the role "${roleName}" as an allowed client ID`,
      );
    }
    const now = Math.floor(this.clock.now() / 1000);
    const claims = {
      ...renderClaims(role.template, subject, now),
      namespace: 'root',
    };
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: key.algorithm, kid: key.current.kid })
      .setIssuer(await this.issuer())
      .setSubject(subject.id)
      .setAudience(role.client_id)
      .setIssuedAt(now)
      .setExpirationTime(now + role.ttl)
      .sign(this.privateKeyOf(key.current));
    return { client_id: role.client_id, token, ttl: role.ttl };
  }

  private privateKeyOf(k: SigningKey): KeyObject {
    let obj = this.privateKeys.get(k.kid);
    if (!obj) {
      obj = privateKeyOf(k.pem);
      if (this.privateKeys.size > 64) this.privateKeys.clear();
      this.privateKeys.set(k.kid, obj);
    }
    return obj;
  }

  /**
   * Whether `token` is an active identity token of this issuer: signature by a published key, not
   * expired, our issuer, and (when given) for `clientId`; `entityActive` says whether its subject is
   * still an enabled entity.
   */
  async introspect(
    token: string,
    clientId: string | undefined,
    entityActive: (id: string) => Promise<boolean>,
  ): Promise<{ active: boolean; error?: string }> {
    try {
      const { payload } = await jwtVerify(token, createLocalJWKSet(await this.jwks()), {
        issuer: await this.issuer(),
        ...(clientId ? { audience: clientId } : {}),
        currentDate: new Date(this.clock.now()),
      });
      if (!payload.sub || !(await entityActive(payload.sub)))
        return { active: false, error: 'entity was not found or is disabled' };
      return { active: true };
    } catch (e) {
      return { active: false, error: (e as Error).message };
    }
  }

  // ---- automatic rotation (active node only) --------------------------------------------------

  /** Start rotating keys whose time has come (call on the node that writes). */
  start(): void {
    this.active = true;
    this.rearm();
  }

  /** Stop the rotation timer. */
  stop(): void {
    this.active = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private active = false;

  private rearm(): void {
    if (this.active)
      this.schedule().catch((e: unknown) =>
        this.logger.error('identity token key rotation check failed', { error: (e as Error)?.message }),
      );
  }

  /** Set the timer to the earliest next rotation (at most an hour away: then it looks again). */
  private async schedule(): Promise<void> {
    let soonest = Infinity;
    for (const name of await this.keyNames()) {
      const rec = await this.key(name);
      if (rec) soonest = Math.min(soonest, rec.next_rotation);
    }
    if (!this.active) return;
    if (this.timer) clearTimeout(this.timer);
    const delay = Math.max(0, Math.min(soonest - this.clock.now(), 3_600_000));
    this.timer = setTimeout(() => {
      this.timer = null;
      this.rotateDue().catch((e: unknown) =>
        this.logger.error('identity token key rotation failed', { error: (e as Error)?.message }),
      );
    }, delay);
    this.timer.unref();
  }

  /** Rotate every key past its rotation time, then re-arm. */
  async rotateDue(): Promise<void> {
    for (const name of await this.keyNames()) {
      await this.locks.run(`key/${name}`, async () => {
        const rec = await this.key(name);
        if (rec && rec.next_rotation <= this.clock.now()) await this.rotateLocked(rec, rec.verification_ttl);
      });
    }
    if (this.active) await this.schedule();
  }

  /** Forget cached private keys (another node changed a key). */
  forget(): void {
    this.privateKeys.clear();
  }
}
