/**
 * Token store. Service tokens are `hvs.` + 24 base62 characters; only an HMAC-SHA256 of the token
 * (under a per-install salt) is stored, so storage never holds a usable token. Accessor indexes are
 * keyed by the same salted hash (as Vault salts them), so no storage key names a token or an accessor.
 * Lookups compare hashes in constant time and are cached in memory for the hot path.
 *
 * Batch tokens (Vault's `hvb.` tokens) are not stored at all: the token is its own entry, sealed with
 * AES-256-GCM under a per-install key kept behind the barrier (`batch-key`), so any node of a cluster
 * can check one. As in Vault they have no accessor, cannot be renewed, revoked or create tokens, have
 * no cubbyhole and no use limit, and end at their TTL (or when their parent, if any, is revoked).
 *
 * This store owns a token's lifecycle (docs/security.md, "Token lifecycle"): every change to a stored
 * token (a use spent, a renewal, a revocation, an unwrap) happens under that token's lock on a fresh
 * read of its record, so concurrent requests cannot spend one use twice or bring a revoked token
 * back; expiry revokes (with the children) on a timer, not only when the token is looked up.
 */
import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { NoncePool } from '../crypto/nonce-pool.js';
import type { Clock } from '../framework/context.js';
import type { CreateTokenOptions, TokenEntry } from './token-entry.js';

export { tokenInfo, type CreateTokenOptions, type TokenEntry } from './token-entry.js';
import { getJSON, putJSON, type Storage } from '../storage/backend.js';
import { openRecord, sealRecord } from '../storage/barrier.js';
import { invalid } from '../framework/errors.js';
import { Lru } from '../storage/lru.js';
import { KeyedLock } from '../framework/keyed-lock.js';
import { ExpiryQueue } from './token-expiry.js';
import { SYSTEM_MAX_TTL } from './token-ttl.js';

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function base62(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += B62[randomInt(62)];
  return s;
}

/** Prefix of batch tokens (Vault's). */
export const BATCH_PREFIX = 'hvb.';
/** Longer than any batch token keyhold issues (policies and metadata included); longer ones are not opened. */
const MAX_BATCH_TOKEN = 8192;
/** Associated data of the sealed entry: binds the blob to its purpose and format version. */
const BATCH_AAD = 'keyhold batch token v1';
/** Batch tokens opened recently (a token is used for many requests; opening costs an AES-GCM call and a JSON parse). */
const BATCH_MEMO_SIZE = 10_000;

/** Entries kept by the hash() memo before it starts over. */
const HASH_MEMO_SIZE = 4096;
/** Token entries kept in memory; past it the oldest cached one is dropped (it reloads from storage). */
const ENTRY_CACHE_SIZE = 50_000;

/** Hash-at-rest token store with an in-memory lookup cache. */
export class TokenStore {
  private salt: Buffer | null = null;
  private readonly cache = new Lru<string, TokenEntry>({ maxEntries: ENTRY_CACHE_SIZE });
  /** Bumped by forget/clear: a load that overlapped one is not cached (cluster standbys). */
  private generation = 0;
  /**
   * Memo of hash(): building an HMAC costs more than the rest of a token check (bench profile,
   * issue 7). The mapping is pure for a given salt, so it never goes stale; bounded, and dropped
   * with the salt.
   */
  private readonly hashes = new Map<string, string>();
  /** Key sealing batch tokens (per install, behind the barrier). */
  private batchKey: Buffer | null = null;
  private readonly batchMemo = new Lru<string, TokenEntry>({ maxEntries: BATCH_MEMO_SIZE });
  private readonly nonces = new NoncePool();

  /** Called for every revoked token (its cubbyhole goes with it); failures are the caller's to log. */
  readonly onRevoke: Array<(entry: TokenEntry) => Promise<void>> = [];
  /** One lock per stored token (by salted hash): uses, renewals, revocations and unwraps take it. */
  private readonly locks = new KeyedLock();
  /** Expiry timers (active node only). */
  readonly expiry: ExpiryQueue;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    onExpiryError: (e: unknown) => void = () => {},
  ) {
    this.expiry = new ExpiryQueue(clock, (hash) => this.expireIfDue(hash), onExpiryError);
  }

  /** Whether a token entry's time has passed. */
  private expired(e: TokenEntry): boolean {
    return e.expire_time > 0 && e.expire_time * 1000 <= this.clock.now();
  }

  /** The stored record of a token, read now (never the cache). */
  private fresh(hash: string): Promise<TokenEntry | null> {
    return getJSON<TokenEntry>(this.storage, `id/${hash}`);
  }

  /**
   * Run expiry on this node (single daemon, or a cluster's active): every stored token with an expiry
   * is scheduled; those already past it are revoked now (with their children).
   */
  async startExpiry(): Promise<void> {
    const epoch = this.expiry.activate();
    for (const name of await this.storage.list('id/')) {
      if (name.endsWith('/') || !this.expiry.isActive()) continue;
      const e = await this.fresh(name);
      if (e?.expire_time) this.expiry.schedule(e.hash, e.expire_time * 1000, epoch);
    }
    await this.expiry.runDue();
  }

  /** Stop running expiry here (standby, seal). */
  stopExpiry(): void {
    this.expiry.deactivate();
  }

  /** The expiry timer's call: revoke the token if its time has come (it may have been renewed). */
  private async expireIfDue(hash: string): Promise<void> {
    await this.locks.run(hash, async () => {
      const e = await this.fresh(hash);
      if (!e) return;
      if (this.expired(e)) await this.revokeLocked(e, {});
      else if (e.expire_time) this.expiry.schedule(hash, e.expire_time * 1000);
    });
  }

  /** Load (or create) the per-install salt. Call after unseal. */
  async init(): Promise<void> {
    let salt = await this.storage.get('salt');
    if (!salt) {
      salt = randomBytes(32);
      await this.storage.put('salt', salt);
    }
    this.salt = salt;
    this.cache.clear();
    this.hashes.clear();
    this.batchMemo.clear();
    this.batchKey = await this.loadBatchKey(true);
  }

  /** The batch-token key: read, or made on first use (`create` false: a node that cannot write only reads). */
  private async loadBatchKey(create: boolean): Promise<Buffer | null> {
    const k = await this.storage.get('batch-key');
    if (k && k.length === 32) return k;
    if (!create) return null;
    const fresh = randomBytes(32);
    try {
      await this.storage.put('batch-key', fresh);
    } catch {
      // A standby cannot write: the active makes the key, and the first batch lookup reads it.
      return null;
    }
    return fresh;
  }

  /** HMAC of a token id under the install salt (hex). */
  hash(id: string): string {
    if (!this.salt) throw new Error('token store not initialised');
    let h = this.hashes.get(id);
    if (h === undefined) {
      h = createHmac('sha256', this.salt).update(id).digest('hex');
      if (this.hashes.size >= HASH_MEMO_SIZE) this.hashes.clear();
      this.hashes.set(id, h);
    }
    return h;
  }

  /** Create a token; returns the token id (shown once) and its entry. */
  async create(opts: CreateTokenOptions): Promise<{ id: string; entry: TokenEntry }> {
    if (opts.type === 'batch') return this.createBatch(opts);
    const id = opts.id ?? `hvs.${base62(24)}`;
    // Seconds with millisecond precision: a 1s token must live a full second, whatever the phase.
    const now = this.clock.now() / 1000;
    // A periodic token lives one period at a time (Vault sdk/framework/lease.go CalculateTTL).
    const ttl = opts.period || opts.ttl || 0;
    const maxTtl = opts.explicit_max_ttl ?? 0;
    // Only a root token may live without a TTL: any other gets the system default (token-ttl.ts
    // gives callers the mount's rules; this is the store's own floor).
    const root = opts.policies.includes('root');
    const effective = (ttl && maxTtl ? Math.min(ttl, maxTtl) : ttl || maxTtl) || (root ? 0 : SYSTEM_MAX_TTL);
    const entry: TokenEntry = {
      hash: this.hash(id),
      accessor: base62(24),
      policies: [...new Set(opts.policies)].sort(),
      display_name: opts.display_name ?? 'token',
      meta: opts.meta ?? {},
      creation_time: now,
      ttl: effective,
      explicit_max_ttl: maxTtl,
      expire_time: effective ? now + effective : 0,
      renewable: opts.renewable ?? effective > 0,
      num_uses: opts.num_uses ?? 0,
      orphan: opts.orphan ?? false,
      parent_accessor: opts.parent_accessor ?? '',
      type: 'service',
    };
    if (opts.path) entry.path = opts.path;
    if (opts.entity_id) entry.entity_id = opts.entity_id;
    if (opts.period) entry.period = opts.period;
    if (opts.role) entry.role = opts.role;
    if (opts.mount_accessor) entry.mount_accessor = opts.mount_accessor;
    if (opts.max_ttl) entry.max_ttl = opts.max_ttl;
    else if (!root && !opts.period) entry.max_ttl = SYSTEM_MAX_TTL;
    if (opts.bound_cidrs?.length) entry.bound_cidrs = opts.bound_cidrs;
    // The entry and its indexes are independent records: written together, their fsyncs overlap (a
    // login's cost is mostly these). A crash between them leaves at worst an index without its entry,
    // which lookups treat as unknown, the same half-state a sequential write could leave.
    await Promise.all([
      putJSON(this.storage, `id/${entry.hash}`, entry),
      putJSON(this.storage, `accessor/${this.hash(entry.accessor)}`, { hash: entry.hash, accessor: entry.accessor }),
      // Parent index (as Vault's token store keeps): revoking a parent finds its children directly.
      entry.parent_accessor && !entry.orphan ? this.putChild(entry.parent_accessor, entry.accessor) : undefined,
    ]);
    this.cache.set(entry.hash, entry);
    if (entry.expire_time) this.expiry.schedule(entry.hash, entry.expire_time * 1000);
    return { id, entry };
  }

  /** A batch token: the entry sealed into the token itself; nothing is written. */
  private async createBatch(opts: CreateTokenOptions): Promise<{ id: string; entry: TokenEntry }> {
    if (opts.period || opts.num_uses || opts.explicit_max_ttl)
      throw invalid('batch tokens cannot have period, num_uses or explicit_max_ttl set');
    if (opts.policies.includes('root')) throw invalid('batch tokens cannot be root tokens');
    if (opts.id) throw invalid('batch tokens cannot have a custom id');
    const key = this.batchKey ?? (this.batchKey = await this.loadBatchKey(true));
    if (!key) throw new Error('batch token key unavailable');
    const now = this.clock.now() / 1000;
    const ttl = opts.ttl || 0;
    // What the token carries (no hash, no accessor: batch tokens have neither).
    const sealed: Omit<TokenEntry, 'hash' | 'accessor'> = {
      policies: [...new Set(opts.policies)].sort(),
      display_name: opts.display_name ?? 'token',
      meta: opts.meta ?? {},
      creation_time: now,
      ttl,
      explicit_max_ttl: 0,
      expire_time: ttl ? now + ttl : 0,
      renewable: false,
      num_uses: 0,
      orphan: opts.orphan ?? false,
      parent_accessor: opts.orphan ? '' : (opts.parent_accessor ?? ''),
      type: 'batch',
    };
    if (opts.path) sealed.path = opts.path;
    if (opts.entity_id) sealed.entity_id = opts.entity_id;
    if (opts.role) sealed.role = opts.role;
    if (opts.mount_accessor) sealed.mount_accessor = opts.mount_accessor;
    if (opts.bound_cidrs?.length) sealed.bound_cidrs = opts.bound_cidrs;
    // The barrier's record format (0x01 | nonce | ciphertext | tag), with the label as associated data.
    const body = sealRecord(key, BATCH_AAD, Buffer.from(JSON.stringify(sealed), 'utf8'), this.nonces.take(12));
    const id = BATCH_PREFIX + body.toString('base64url');
    // No salted hash (nothing is stored under it; cubbyholes and wrapping refuse batch tokens). Not
    // remembered here either: a login's token may never be used, and its first use opens it.
    const entry = sealed as TokenEntry;
    entry.hash = '';
    entry.accessor = '';
    return { id, entry };
  }

  /** The entry sealed in a batch token, or null when it is not one of ours (forged, damaged, other install). */
  private openBatch(id: string, key: Buffer): TokenEntry | null {
    try {
      const body = id.slice(BATCH_PREFIX.length);
      const bytes = Buffer.from(body, 'base64url');
      // One spelling per token (Go's RawURLEncoding): Node's decoder ignores a stray last character
      // and non-zero padding bits, which would give one token several audit HMACs.
      if (bytes.toString('base64url') !== body) return null;
      const plain = openRecord(key, BATCH_AAD, bytes);
      const e = JSON.parse(plain.toString('utf8')) as TokenEntry;
      if (e.type !== 'batch' || !Array.isArray(e.policies)) return null;
      return { ...e, hash: '', accessor: '' };
    } catch {
      return null;
    }
  }

  /** A batch token's entry when valid now: sealed by this install, unexpired, its parent (if any) alive. */
  private async lookupBatch(id: string): Promise<TokenEntry | null> {
    if (id.length > MAX_BATCH_TOKEN || !/^hvb\.[A-Za-z0-9_-]+$/.test(id)) return null;
    let e = this.batchMemo.get(id);
    if (!e) {
      const key = this.batchKey ?? (this.batchKey = await this.loadBatchKey(false));
      if (!key) return null;
      const opened = this.openBatch(id, key);
      if (!opened) return null;
      e = opened;
      this.batchMemo.set(id, e);
    }
    if (e.expire_time && e.expire_time * 1000 <= this.clock.now()) {
      this.batchMemo.delete(id);
      return null;
    }
    // Vault: a batch token with a parent is valid only while the parent is.
    if (e.parent_accessor) {
      const parent = await this.lookupAccessor(e.parent_accessor);
      if (!parent || (parent.expire_time && parent.expire_time * 1000 <= this.clock.now())) return null;
    }
    return e;
  }

  /**
   * The entry of a valid token when it is cached and needs no storage (not expired, not spent),
   * else undefined (then `lookup` decides). Same checks as `lookup`.
   */
  cachedEntry(id: string): TokenEntry | undefined {
    if (id.startsWith(BATCH_PREFIX)) {
      const e = this.batchMemo.peek(id);
      if (!e || e.parent_accessor || (e.expire_time && e.expire_time * 1000 <= this.clock.now())) return undefined;
      return e;
    }
    if (!this.salt || id.length > 256) return undefined;
    const h = this.hash(id);
    const entry = this.cache.get(h);
    if (!entry) return undefined;
    if (!timingSafeEqual(Buffer.from(entry.hash, 'hex'), Buffer.from(h, 'hex'))) return undefined;
    if (entry.expire_time && entry.expire_time * 1000 <= this.clock.now()) return undefined;
    if (entry.spent) return undefined;
    return entry;
  }

  /**
   * Look up a token entry by id; null when unknown, expired (then removed) or spent. `includeSpent`
   * still finds a token whose last use is the request now running (its own handler may need it).
   */
  async lookup(id: string, opts: { includeSpent?: boolean } = {}): Promise<TokenEntry | null> {
    if (!this.salt) return null;
    if (id.startsWith(BATCH_PREFIX)) return this.lookupBatch(id);
    if (id.length > 256) return null;
    const h = this.hash(id);
    let entry: TokenEntry | null | undefined = this.cache.get(h);
    let loaded = false;
    if (!entry) {
      const gen = this.generation;
      entry = await this.fresh(h);
      if (!entry) return null;
      loaded = true;
      // A load that overlapped an invalidation (revoked on another node) is used once, not cached.
      if (gen === this.generation) this.cache.set(h, entry);
    }
    // Constant-time confirmation of the stored hash (defence in depth against map-lookup timing).
    if (!timingSafeEqual(Buffer.from(entry.hash, 'hex'), Buffer.from(h, 'hex'))) return null;
    if (this.expired(entry)) {
      await this.revokeEntry(entry);
      return null;
    }
    // A child read from storage (first use after a restart, or a cache miss) is checked against its
    // parents: one that expired meanwhile is revoked now, taking this token with it. Cached children
    // rely on the expiry timer, which revokes the parent at its time.
    if (loaded && entry.parent_accessor && !(await this.parentsAlive(entry))) {
      await this.revokeEntry(entry);
      return null;
    }
    if (entry.spent && !opts.includeSpent) return null;
    return entry;
  }

  /** Whether every ancestor of `entry` is still valid (an expired one is revoked on the way). */
  private async parentsAlive(entry: TokenEntry): Promise<boolean> {
    let e = entry;
    for (let depth = 0; e.parent_accessor && depth < 64; depth++) {
      const parent = await this.lookupAccessor(e.parent_accessor);
      if (!parent) return false;
      e = parent;
    }
    return true;
  }

  /**
   * Whether a valid token has this salted hash; an expired one is revoked on the way (so its
   * cubbyhole goes too). Used by the cubbyhole sweep, which has hashes, not tokens.
   */
  async liveHash(hash: string): Promise<boolean> {
    if (!this.salt || !/^[0-9a-f]{64}$/.test(hash)) return false;
    const e = this.cache.get(hash) ?? (await this.fresh(hash));
    if (!e) return false;
    if (this.expired(e)) {
      await this.revokeEntry(e);
      return false;
    }
    return true;
  }

  /** Look up by accessor; null when unknown or expired (an expired token is revoked on the way). */
  async lookupAccessor(accessor: string): Promise<TokenEntry | null> {
    if (!/^[A-Za-z0-9]{1,64}$/.test(accessor)) return null;
    const ref = await getJSON<{ hash: string }>(this.storage, `accessor/${this.hash(accessor)}`);
    if (!ref) return null;
    const e = this.cache.get(ref.hash) ?? (await this.fresh(ref.hash));
    if (!e) return null;
    if (this.expired(e)) {
      await this.revokeEntry(e);
      return null;
    }
    return e;
  }

  /**
   * Spend one use of a limited-use token, under its lock on a fresh read: `ok` (uses remain), `last`
   * (this request has the last one: the caller revokes the token when the request is done, as Vault
   * does) or `gone` (no use could be spent: spent, revoked or expired meanwhile; refuse the request).
   */
  async spendUse(entry: TokenEntry): Promise<'ok' | 'last' | 'gone'> {
    if (entry.type === 'batch' || entry.num_uses <= 0) return entry.spent ? 'gone' : 'ok';
    return this.locks.run(entry.hash, async () => {
      const e = await this.fresh(entry.hash);
      if (!e || e.spent || e.num_uses <= 0 || this.expired(e)) return 'gone';
      e.num_uses -= 1;
      if (e.num_uses === 0) e.spent = true;
      await putJSON(this.storage, `id/${e.hash}`, e);
      this.cache.set(e.hash, e);
      return e.spent ? 'last' : 'ok';
    });
  }

  /**
   * Take a single-use token for good (unwrap, rewrap): under its lock, on a fresh read, run `fn` with
   * the entry and revoke the token. Exactly one caller gets to run `fn`; the others (and any caller
   * once a request is spending the token's one use) get null.
   */
  async consume<T>(entry: TokenEntry, fn: (e: TokenEntry) => Promise<T>): Promise<{ value: T } | null> {
    return this.locks.run(entry.hash, async () => {
      const e = await this.fresh(entry.hash);
      if (!e || e.spent || this.expired(e)) return null;
      try {
        return { value: await fn(e) };
      } finally {
        await this.revokeLocked(e, {});
      }
    });
  }

  /**
   * Renew a token: a periodic token gets its period again (the increment is ignored); any other gets
   * `increment` (else its creation TTL), bounded by its max TTL from creation and by the explicit max
   * (Vault sdk/framework/lease.go CalculateTTL). Past the bound: 400 `past the max TTL, cannot renew`.
   */
  async renew(entry: TokenEntry, increment?: number): Promise<TokenEntry | null> {
    if (entry.type === 'batch') throw invalid('batch tokens cannot be renewed');
    // A fresh read under the lock: a token revoked or expired meanwhile stays gone (null).
    return this.locks.run(entry.hash, async () => {
      const e = await this.fresh(entry.hash);
      if (!e || this.expired(e)) return null;
      return this.renewLocked(e, increment);
    });
  }

  private async renewLocked(entry: TokenEntry, increment?: number): Promise<TokenEntry> {
    const now = this.clock.now() / 1000;
    let ttl = entry.period ? entry.period : increment || entry.ttl;
    let limit = Infinity;
    if (!entry.period && entry.max_ttl) limit = entry.creation_time + entry.max_ttl - now;
    if (entry.explicit_max_ttl) limit = Math.min(limit, entry.creation_time + entry.explicit_max_ttl - now);
    if (limit <= 0) throw invalid('past the max TTL, cannot renew');
    ttl = Math.min(ttl, limit);
    entry.expire_time = ttl > 0 ? now + ttl : entry.expire_time;
    entry.last_renewal_time = now;
    await putJSON(this.storage, `id/${entry.hash}`, entry);
    this.cache.set(entry.hash, entry);
    if (entry.expire_time) this.expiry.schedule(entry.hash, entry.expire_time * 1000);
    return entry;
  }

  /**
   * Revoke a token and, recursively, the tokens created through it. With `orphanChildren`
   * (revoke-orphan) the children stay valid and become orphans instead.
   */
  async revokeEntry(entry: TokenEntry, opts: { orphanChildren?: boolean } = {}): Promise<void> {
    if (entry.type === 'batch') throw invalid('batch tokens cannot be revoked');
    await this.locks.run(entry.hash, () => this.revokeLocked(entry, opts));
  }

  /** Revoke while holding the token's lock. */
  private async revokeLocked(entry: TokenEntry, opts: { orphanChildren?: boolean }): Promise<void> {
    // A load that overlapped this revocation must not put the entry back into the cache.
    this.generation++;
    this.cache.delete(entry.hash);
    this.expiry.unschedule(entry.hash);
    await this.storage.delete(`id/${entry.hash}`);
    for (const hook of this.onRevoke) await hook(entry);
    await this.storage.delete(`accessor/${this.hash(entry.accessor)}`);
    if (entry.parent_accessor)
      await this.storage.delete(`parent/${this.hash(entry.parent_accessor)}/${this.hash(entry.accessor)}`);
    const parentDir = `parent/${this.hash(entry.accessor)}/`;
    for (const name of await this.storage.list(parentDir)) {
      const ref = await getJSON<{ accessor: string }>(this.storage, parentDir + name);
      await this.storage.delete(parentDir + name);
      if (!ref) continue;
      const childRef = await getJSON<{ hash: string }>(this.storage, `accessor/${this.hash(ref.accessor)}`);
      if (!childRef) continue;
      if (opts.orphanChildren) {
        await this.locks.run(childRef.hash, async () => {
          const child = await this.fresh(childRef.hash);
          if (!child) return;
          child.orphan = true;
          child.parent_accessor = '';
          await putJSON(this.storage, `id/${child.hash}`, child);
          this.cache.set(child.hash, child);
        });
      } else {
        // Expired or not, the child goes with its parent (its parent index entry is gone already).
        const child = this.cache.get(childRef.hash) ?? (await this.fresh(childRef.hash));
        if (child) await this.revokeEntry({ ...child, parent_accessor: '' });
      }
    }
  }

  /** Revoke every token an auth mount issued (sys/auth disable); returns how many. */
  async revokeByMount(mountAccessor: string): Promise<number> {
    let n = 0;
    for (const name of await this.storage.list('id/')) {
      if (name.endsWith('/')) continue;
      const e = await getJSON<TokenEntry>(this.storage, `id/${name}`);
      if (e?.mount_accessor === mountAccessor) {
        await this.revokeEntry(e);
        n++;
      }
    }
    return n;
  }

  /** All token accessors. */
  async listAccessors(): Promise<string[]> {
    const out: string[] = [];
    for (const n of await this.storage.list('accessor/')) {
      if (n.endsWith('/')) continue;
      const ref = await getJSON<{ accessor?: string }>(this.storage, `accessor/${n}`);
      if (ref?.accessor) out.push(ref.accessor);
    }
    return out.sort();
  }

  /** Record `child` under `parent` (storage keys are salted hashes: accessors never appear in file names). */
  private async putChild(parent: string, child: string): Promise<void> {
    await putJSON(this.storage, `parent/${this.hash(parent)}/${this.hash(child)}`, { accessor: child });
  }

  /** Forget one cached entry by its stored hash (changed by another daemon on shared storage). */
  forget(hash: string): void {
    this.generation++;
    this.cache.delete(hash);
  }

  /** Drop cached entries only (another node may have changed any of them); the salt stays. */
  forgetAll(): void {
    this.generation++;
    this.cache.clear();
  }

  /** Drop cached entries (after seal). */
  clear(): void {
    this.stopExpiry();
    this.generation++;
    this.cache.clear();
    this.hashes.clear();
    this.salt = null;
    this.batchMemo.clear();
    this.batchKey?.fill(0);
    this.batchKey = null;
  }
}
