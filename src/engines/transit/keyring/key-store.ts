/**
 * The transit key store of one mount. Unlike Vault, which keeps every version in one `policy/<name>`
 * entry, each version is its own record, so keys with many thousands of versions load and rotate
 * normally. Layout (mount storage, behind the barrier):
 *
 * | record                      | content                                              |
 * |-----------------------------|------------------------------------------------------|
 * | `policy/<name>`             | key configuration (TransitKey without versions)      |
 * | `versions/<name>/<n>`       | one version: key, hmac_key, PKCS#8/SPKI DER, time    |
 * | `config/keys`               | `{ "disable_upsert": bool }`                         |
 * | `config/cache`              | `{ "size": int }`                                    |
 * | `wrapping/key`              | the mount's BYOK RSA-4096 wrapping key (PKCS#8)      |
 *
 * Per-key reader/writer locks guard changes; loaded keys live in a cache (LRU when sized).
 */
import type { Clock, Logger } from '../../../framework/context.js';
import { conflict, invalid } from '../../../framework/errors.js';
import type { Storage } from '../../../storage/backend.js';
import { KeyCache } from './key-cache.js';
import { KeyLocks } from './key-locks.js';
import { cloneConfig, newKeyConfig, rotationRefusal, validateCreate } from './key-rules.js';
import { fromRecord, generateVersion, toRecord, type VersionRecord } from './material.js';
import { refuseSoftDeleted } from './soft-delete.js';
import type { CreateKeyOptions, KeyStore, KeyVersion, TransitKey } from './types.js';

const POLICY = 'policy/';
const VERSIONS = 'versions/';
/** Parallel storage operations when loading or writing many versions. */
const IO_PARALLEL = 64;

type StoredPolicy = Omit<TransitKey, 'versions'>;

/** Run `fn` over `items` with at most `n` in flight. */
async function eachLimited<T>(items: readonly T[], n: number, fn: (t: T) => Promise<void>): Promise<void> {
  let i = 0;
  const worker = async () => {
    while (i < items.length) await fn(items[i++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let v = from; v <= to; v++) out.push(v);
  return out;
}

/** Listener told when a key's auto-rotation inputs change (scheduler). */
export type KeyChangeListener = (name: string, key: TransitKey | null) => void;

/** The key store: load, create, rotate, change, trim, delete, persist; see the layout above. */
export class TransitKeyStore implements KeyStore {
  private readonly cache: KeyCache<TransitKey>;
  private readonly locks = new KeyLocks();
  private readonly loading = new Map<string, Promise<TransitKey | null>>();
  /** Write counter per key name (detects loads that raced a change). */
  private readonly generation = new Map<string, number>();
  private listener: KeyChangeListener | null = null;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly logger: Logger,
    cacheSize = 0,
  ) {
    this.cache = new KeyCache(cacheSize);
  }

  /** Seconds since the epoch, fractional (version creation times). */
  nowSeconds(): number {
    return this.clock.now() / 1000;
  }

  /** Configured cache size (0 = unbounded) and entries held. */
  cacheInfo(): { size: number; count: number } {
    return { size: this.cache.size, count: this.cache.count };
  }

  /** Register the scheduler's change listener. */
  onChange(listener: KeyChangeListener): void {
    this.listener = listener;
  }

  /** Key names, sorted. */
  async list(): Promise<string[]> {
    return (await this.storage.list(POLICY)).filter((n) => !n.endsWith('/'));
  }

  /**
   * Drop a cached key another node changed (cluster standby). Bumping the generation makes a load
   * that raced the change read again instead of caching the old copy.
   */
  forget(name: string): void {
    this.bump(name);
    this.cache.delete(name);
  }

  /** The key if it is in the cache (no storage read). */
  cached(name: string): TransitKey | undefined {
    return this.cache.get(name);
  }

  /** The key, or null when absent (cached; concurrent loads of one key are shared). */
  async get(name: string): Promise<TransitKey | null> {
    const hit = this.cache.get(name);
    if (hit) return hit;
    let p = this.loading.get(name);
    if (!p) {
      p = this.load(name).finally(() => this.loading.delete(name));
      this.loading.set(name, p);
    }
    return p;
  }

  /** The key's configuration only (no versions loaded); for scans. */
  async peekConfig(name: string): Promise<StoredPolicy | null> {
    const cached = this.cache.has(name) ? this.cache.get(name) : undefined;
    if (cached) return cached;
    const b = await this.storage.get(POLICY + name);
    return b ? (JSON.parse(b.toString('utf8')) as StoredPolicy) : null;
  }

  /**
   * Load from storage; if the key was written meanwhile (an LRU eviction let a load race a change),
   * load again, and never replace a cached entry, so the cache cannot hold a stale copy.
   */
  private async load(name: string): Promise<TransitKey | null> {
    for (let attempt = 0; ; attempt++) {
      const before = this.generation.get(name) ?? 0;
      const key = await this.loadOnce(name);
      if ((this.generation.get(name) ?? 0) === before || attempt >= 5) {
        if (!key) return null;
        const cached = this.cache.get(name);
        if (cached) return cached;
        this.cache.set(name, key);
        return key;
      }
    }
  }

  private bump(name: string): void {
    this.generation.set(name, (this.generation.get(name) ?? 0) + 1);
  }

  private async loadOnce(name: string): Promise<TransitKey | null> {
    const b = await this.storage.get(POLICY + name);
    if (!b) return null;
    const cfg = JSON.parse(b.toString('utf8')) as StoredPolicy;
    const versions = new Map<number, KeyVersion>();
    const from = Math.max(1, cfg.minAvailableVersion);
    const loaded: (KeyVersion | null)[] = new Array(cfg.latestVersion + 1).fill(null);
    await eachLimited(range(from, cfg.latestVersion), IO_PARALLEL, async (v) => {
      const rb = await this.storage.get(`${VERSIONS}${name}/${v}`);
      if (rb) loaded[v] = fromRecord(JSON.parse(rb.toString('utf8')) as VersionRecord, cfg.type);
    });
    for (let v = from; v <= cfg.latestVersion; v++) {
      const kv = loaded[v];
      if (kv) versions.set(v, kv);
      else this.logger.warn('transit key version record missing', { key: name, version: v });
    }
    return { ...cfg, versions };
  }

  /** Create the key if absent (validated); `created` tells whether this call created it. */
  async create(name: string, opts: CreateKeyOptions): Promise<{ key: TransitKey; created: boolean }> {
    validateCreate(opts);
    return this.locks.with(name, 'exclusive', async () => {
      const existing = await this.get(name);
      if (existing) return { key: existing, created: false };
      const key = newKeyConfig(name, opts);
      const v1 = await generateVersion(key.type, 1, {
        keySize: key.keySize,
        now: this.nowSeconds(),
        convergentVersion: key.convergentEncryption ? 3 : undefined,
        managedKeyId: opts.managedKeyId,
        parameterSet: key.parameterSet,
        hybridEc: key.hybridEc,
      });
      key.latestVersion = 1;
      key.versions.set(1, v1);
      await this.writeVersion(key, v1);
      await this.writePolicy(key);
      this.cache.set(name, key);
      this.listener?.(name, key);
      return { key, created: true };
    });
  }

  /** Run `fn` holding the key's lock. */
  withLock<T>(name: string, mode: 'shared' | 'exclusive', fn: () => Promise<T>): Promise<T> {
    return this.locks.with(name, mode, fn);
  }

  /**
   * Change a key's configuration under its exclusive lock: `fn` edits a copy; the copy is persisted and
   * then becomes the live key. Returns what `fn` returned, with the updated key.
   */
  async update<T>(
    name: string,
    missing: () => Error,
    fn: (draft: TransitKey) => Promise<T> | T,
  ): Promise<{ key: TransitKey; result: T }> {
    return this.locks.with(name, 'exclusive', async () => {
      const key = await this.get(name);
      if (!key) throw missing();
      const draft = cloneConfig(key);
      const result = await fn(draft);
      await this.writePolicy(draft);
      Object.assign(key, draft);
      this.cache.set(name, key);
      this.listener?.(name, key);
      return { key, result };
    });
  }

  /** Add a new latest version with fresh material of the same size (the caller holds no lock). */
  async rotate(
    name: string,
    missing: () => Error,
    refuse: (msg: string) => Error,
    managedKeyId?: string,
  ): Promise<TransitKey> {
    return this.locks.with(name, 'exclusive', async () => {
      const key = await this.get(name);
      if (!key) throw missing();
      return this.rotateLocked(key, refuse, managedKeyId);
    });
  }

  /** Rotate a key whose exclusive lock the caller holds. */
  async rotateLocked(key: TransitKey, refuse: (msg: string) => Error, managedKeyId?: string): Promise<TransitKey> {
    refuseSoftDeleted(key);
    const refusal = rotationRefusal(key, managedKeyId);
    if (refusal) throw refuse(refusal);
    const n = key.latestVersion + 1;
    const v = await generateVersion(key.type, n, {
      keySize: key.keySize,
      now: this.nowSeconds(),
      convergentVersion: key.convergentEncryption ? 3 : undefined,
      managedKeyId,
      parameterSet: key.parameterSet,
      hybridEc: key.hybridEc,
    });
    await this.writeVersion(key, v);
    const draft = cloneConfig(key);
    draft.latestVersion = n;
    draft.importedKey = false; // rotated inside the service: import_version no longer applies
    await this.writePolicy(draft);
    key.versions.set(n, v);
    Object.assign(key, draft);
    this.cache.set(key.name, key);
    this.listener?.(key.name, key);
    return key;
  }

  /** Drop versions below `minAvailable` for good (rules checked by the caller under the lock). */
  async trimLocked(key: TransitKey, minAvailable: number): Promise<void> {
    const old = Math.max(1, key.minAvailableVersion);
    const draft = cloneConfig(key);
    draft.minAvailableVersion = minAvailable;
    await this.writePolicy(draft);
    Object.assign(key, draft);
    const gone = range(old, minAvailable - 1);
    for (const v of gone) key.versions.delete(v);
    await eachLimited(gone, IO_PARALLEL, (v) => this.storage.delete(`${VERSIONS}${key.name}/${v}`));
  }

  /** Delete the key and all its versions (deletion_allowed checked by the caller). */
  async deleteLocked(key: TransitKey): Promise<void> {
    await this.storage.delete(POLICY + key.name);
    this.bump(key.name);
    this.cache.delete(key.name);
    const names = await this.storage.list(`${VERSIONS}${key.name}/`);
    await eachLimited(names, IO_PARALLEL, (v) => this.storage.delete(`${VERSIONS}${key.name}/${v}`));
    this.listener?.(key.name, null);
  }

  /**
   * Store a whole key (restore, import): versions first, then the policy record, which makes it live.
   * Refuses an existing name unless `force`; the caller holds the exclusive lock.
   */
  async putWholeLocked(key: TransitKey, force: boolean, exists: (name: string) => Error): Promise<void> {
    const current = await this.get(key.name);
    if (current && !force) throw exists(key.name);
    if (current) {
      const stale = (await this.storage.list(`${VERSIONS}${key.name}/`)).filter((v) => !key.versions.has(Number(v)));
      await eachLimited(stale, IO_PARALLEL, (v) => this.storage.delete(`${VERSIONS}${key.name}/${v}`));
    }
    await eachLimited([...key.versions.values()], IO_PARALLEL, (v) => this.writeVersion(key, v));
    await this.writePolicy(key);
    if (current) {
      // Keep the live object (others may hold it) and make it the restored key.
      current.versions.clear();
      for (const [n, v] of key.versions) current.versions.set(n, v);
      Object.assign(current, { ...key, versions: current.versions });
      this.cache.set(key.name, current);
    } else this.cache.set(key.name, key);
    this.listener?.(key.name, key);
  }

  /**
   * Add or replace one version of a key whose exclusive lock the caller holds (import_version,
   * set-certificate). A version above the latest becomes the new latest.
   */
  async putVersionLocked(key: TransitKey, v: KeyVersion): Promise<void> {
    await this.writeVersion(key, v);
    if (v.version > key.latestVersion) {
      const draft = cloneConfig(key);
      draft.latestVersion = v.version;
      await this.writePolicy(draft);
      Object.assign(key, draft);
    }
    key.versions.set(v.version, v);
    this.cache.set(key.name, key);
    this.listener?.(key.name, key);
  }

  /** Persist one version record (a new one, or one changed by set-certificate / import_version). */
  async writeVersion(key: TransitKey, v: KeyVersion): Promise<void> {
    await this.storage.put(
      `${VERSIONS}${key.name}/${v.version}`,
      Buffer.from(JSON.stringify(toRecord(v, key.type)), 'utf8'),
    );
    this.bump(key.name);
  }

  /** Persist the configuration record of a key. */
  async writePolicy(key: TransitKey): Promise<void> {
    const { versions: _versions, ...cfg } = key;
    await this.storage.put(POLICY + key.name, Buffer.from(JSON.stringify(cfg), 'utf8'));
    this.bump(key.name);
  }

  /** Resize the cache (applied at start-up and plugin reload). */
  resizeCache(size: number): void {
    this.cache.resize(size);
  }

  /** A JSON record of mount-level configuration. */
  async readConfig<T>(name: 'keys' | 'cache'): Promise<T | null> {
    const b = await this.storage.get(`config/${name}`);
    return b ? (JSON.parse(b.toString('utf8')) as T) : null;
  }

  /** Write a mount-level configuration record. */
  async writeConfig(name: 'keys' | 'cache', value: unknown): Promise<void> {
    await this.storage.put(`config/${name}`, Buffer.from(JSON.stringify(value), 'utf8'));
  }

  /** Raw access for the wrapping key record. */
  get raw(): Storage {
    return this.storage;
  }
}

/** A 400 "key not found"-style error factory for routes. */
export const keyMissing = (msg: string) => () => invalid(msg);
/** Vault's restore/import refusal for an existing name. */
export const keyExists = (name: string) =>
  conflict(`key "${name}" already exists (restore with force=true to overwrite it)`, 400);
