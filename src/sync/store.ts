/**
 * Storage layout of secret sync (under sys/sync/, behind the barrier):
 *   config                      SyncConfig
 *   destinations/<type>/<name>  DestinationRecord (credentials included; the barrier encrypts them)
 *   links/<type>/<name>/<id>    LinkRecord (id = encodeURIComponent(accessor/secret_name))
 *   queue/<seq>                 QueueEntry (durable operations; survive restarts)
 *   github-apps/<name>          GithubAppRecord (the app's private key; the barrier encrypts it)
 *   activation                  { activated, at } (sys/activation-flags)
 *   value-mac-key               { key } (random key of the keyed hashes that mark written entries; written-marks.ts)
 */
import { randomBytes } from 'node:crypto';
import { getJSON, putJSON, type Storage } from '../storage/backend.js';
import {
  DEFAULT_SYNC_CONFIG,
  type DestinationRecord,
  type DestinationType,
  type LinkRecord,
  type SyncConfig,
} from './types.js';

/** A GitHub App registered under sys/sync/github-apps (reference sync-wire.md 1.9). */
export interface GithubAppRecord {
  name: string;
  app_id: number;
  /** PEM (PKCS#1 or PKCS#8) RSA private key of the app. */
  private_key: string;
  /** base64(SHA-256(DER SubjectPublicKeyInfo)): what GitHub shows as the key's fingerprint. */
  fingerprint: string;
  created_at: string;
  updated_at: string;
}

/** A durable queued operation: "bring this link to its desired state". */
export interface QueueEntry {
  link: string;
  attempts: number;
  /** Wall-clock ms before which it must not run (backoff). */
  not_before: number;
  enqueued_at: number;
}

/** Typed access to sync records. */
export class SyncStore {
  constructor(private readonly s: Storage) {}

  async config(): Promise<SyncConfig> {
    return { ...DEFAULT_SYNC_CONFIG, ...((await getJSON<SyncConfig>(this.s, 'config')) ?? {}) };
  }
  async putConfig(c: SyncConfig): Promise<void> {
    await putJSON(this.s, 'config', c);
  }
  async deleteConfig(): Promise<void> {
    await this.s.delete('config');
  }

  /**
   * Destinations are cached once read (write-through): the worker reads the destination for every
   * operation and set/remove answer with its associations, so an uncached read (file, decrypt,
   * parse) per call added up. Callers get the cached record itself, deeply frozen (a copy per read
   * cost more than the rest of the lookup): change a copy and put that.
   */
  private readonly destCache = new Map<string, DestinationRecord>();
  /** Bumped by every put/delete of a destination: a read that overlapped one does not fill the cache. */
  private readonly destEpoch = new Map<string, number>();

  async getDest(type: string, name: string): Promise<DestinationRecord | null> {
    const key = `${type}/${name}`;
    const hit = this.destCache.get(key);
    if (hit) return hit;
    const epoch = this.destEpoch.get(key) ?? 0;
    const got = await getJSON<DestinationRecord>(this.s, `destinations/${key}`);
    if (!got) return null;
    deepFreeze(got);
    if ((this.destEpoch.get(key) ?? 0) === epoch) this.destCache.set(key, got);
    return got;
  }
  async putDest(d: DestinationRecord): Promise<void> {
    const key = `${d.type}/${d.name}`;
    this.bumpDest(key);
    try {
      await putJSON(this.s, `destinations/${key}`, d);
    } finally {
      this.bumpDest(key);
    }
    this.destCache.set(key, deepFreeze(structuredClone(d)));
  }
  async deleteDest(type: string, name: string): Promise<void> {
    const key = `${type}/${name}`;
    this.bumpDest(key);
    try {
      await this.s.delete(`destinations/${key}`);
    } finally {
      this.bumpDest(key);
    }
  }
  private bumpDest(key: string): void {
    this.destCache.delete(key);
    this.destEpoch.set(key, (this.destEpoch.get(key) ?? 0) + 1);
  }
  /** Names of destinations of one type. */
  async destNames(type: DestinationType): Promise<string[]> {
    return (await this.s.list(`destinations/${type}/`)).filter((n) => !n.endsWith('/'));
  }

  /**
   * Links are cached per destination (write-through, loaded on first use): set/remove answer with the
   * destination's whole association map, as Vault does, and decrypting every record for every call
   * made bulk association quadratic. Memory is proportional to the number of associations (~0.5 KB each).
   */
  private readonly linkCache = new Map<string, Map<string, LinkRecord>>();
  private readonly loading = new Map<string, Promise<Map<string, LinkRecord>>>();

  private linksFor(type: string, name: string): Promise<Map<string, LinkRecord>> {
    const key = `${type}/${name}`;
    const hit = this.linkCache.get(key);
    if (hit) return Promise.resolve(hit);
    let p = this.loading.get(key);
    if (!p) {
      p = (async () => {
        const m = new Map<string, LinkRecord>();
        for (const id of (await this.s.list(`links/${type}/${name}/`)).filter((n) => !n.endsWith('/'))) {
          const l = await getJSON<LinkRecord>(this.s, `links/${type}/${name}/${id}`);
          if (l) m.set(id, deepFreeze(l));
        }
        this.linkCache.set(key, m);
        this.loading.delete(key);
        return m;
      })();
      this.loading.set(key, p);
    }
    return p;
  }

  /** A link record (the cached one, deeply frozen: change a copy and put that), or null. */
  async getLink(type: string, name: string, id: string): Promise<LinkRecord | null> {
    const m = this.linkCache.get(`${type}/${name}`) ?? (await this.linksFor(type, name));
    return m.get(id) ?? null;
  }
  /** Store a link record; `l` becomes the cached record and is frozen (do not change it afterwards). */
  async putLink(l: LinkRecord): Promise<void> {
    const key = `${l.dest_type}/${l.dest_name}`;
    const m = await this.linksFor(l.dest_type, l.dest_name);
    await putJSON(this.s, `links/${key}/${l.id}`, l);
    this.unwritten.delete(`${key}/${l.id}`);
    if (!m.has(l.id)) this.orderAdd(key, m, l.id);
    m.set(l.id, deepFreeze(l));
    this.linkChanged?.(key, l.id);
  }
  /**
   * Put a new link in the cache without writing it (`l` is frozen, as by `putLink`): the next
   * `putLink` of it (the worker's first attempt) or `saveLink` writes it. Only for a caller that calls `saveLink` before it reports
   * the link as created (SyncService.setAssociation).
   */
  async stageLink(l: LinkRecord): Promise<void> {
    const key = `${l.dest_type}/${l.dest_name}`;
    const m = await this.linksFor(l.dest_type, l.dest_name);
    if (!m.has(l.id)) this.orderAdd(key, m, l.id);
    m.set(l.id, deepFreeze(l));
    this.unwritten.add(`${key}/${l.id}`);
    this.linkChanged?.(key, l.id);
  }
  /** Write a staged link that nothing has written yet. */
  async saveLink(type: string, name: string, id: string): Promise<void> {
    if (!this.unwritten.has(`${type}/${name}/${id}`)) return;
    const l = (await this.linksFor(type, name)).get(id);
    if (l) await this.putLink(l);
    else this.unwritten.delete(`${type}/${name}/${id}`);
  }
  /** Staged links not written yet (`type/name/id`). */
  private readonly unwritten = new Set<string>();
  async deleteLink(type: string, name: string, id: string): Promise<void> {
    const key = `${type}/${name}`;
    const m = await this.linksFor(type, name);
    await this.s.delete(`links/${key}/${id}`);
    this.unwritten.delete(`${key}/${id}`);
    m.delete(id);
    this.linkOrder.delete(key);
    this.linkChanged?.(key, id);
  }
  /** Link ids of one destination, sorted. */
  async linkIds(type: string, name: string): Promise<string[]> {
    return [...(await this.sortedIds(type, name))];
  }
  /** Every link of a destination, sorted by id (read-only views; do not mutate). */
  async links(type: string, name: string): Promise<readonly LinkRecord[]> {
    const m = await this.linksFor(type, name);
    return (await this.sortedIds(type, name)).map((id) => m.get(id)!);
  }
  /** Forget a destination's cached links (after it is deleted). */
  forgetLinks(type: string, name: string): void {
    const key = `${type}/${name}`;
    this.linkCache.delete(key);
    this.linkOrder.delete(key);
    for (const k of this.unwritten) if (k.startsWith(`${key}/`)) this.unwritten.delete(k);
    this.linkChanged?.(key, null);
  }
  /** The cached record of a link, if its destination's links are loaded (read-only; do not mutate). */
  peekLink(type: string, name: string, id: string): LinkRecord | undefined {
    return this.linkCache.get(`${type}/${name}`)?.get(id);
  }
  /**
   * Told of every link written, staged or deleted (`dest` is `type/name`; `id` null: all of the
   * destination's links were forgotten), synchronously after the cache changed.
   */
  linkChanged: ((dest: string, id: string | null) => void) | null = null;

  /** Sorted ids per destination (kept until a link is added or deleted). */
  private readonly linkOrder = new Map<string, string[]>();

  /** Insert a new id into the cached order of `m` (if any), keeping it sorted. */
  private orderAdd(key: string, m: Map<string, LinkRecord>, id: string): void {
    const ids = this.linkOrder.get(key);
    if (!ids || this.linkCache.get(key) !== m) return;
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ids[mid]! < id) lo = mid + 1;
      else hi = mid;
    }
    ids.splice(lo, 0, id);
  }

  /** Sorted link ids of a destination whose links are loaded, now (read-only); undefined when not loaded. */
  peekIds(type: string, name: string): readonly string[] | undefined {
    const key = `${type}/${name}`;
    const m = this.linkCache.get(key);
    if (!m) return undefined;
    let ids = this.linkOrder.get(key);
    if (!ids) this.linkOrder.set(key, (ids = [...m.keys()].sort()));
    return ids;
  }

  private async sortedIds(type: string, name: string): Promise<readonly string[]> {
    const key = `${type}/${name}`;
    const m = await this.linksFor(type, name);
    let ids = this.linkOrder.get(key);
    if (!ids || this.linkCache.get(key) !== m) {
      ids = [...m.keys()].sort();
      if (this.linkCache.get(key) === m) this.linkOrder.set(key, ids);
    }
    return ids;
  }

  private macKey: Promise<Buffer> | null = null;

  /**
   * The key of the keyed hashes marking what each entry wrote (written-marks.ts): 32 random bytes
   * created on first use and stored behind the barrier like every sync record, never in clear.
   */
  valueMacKey(): Promise<Buffer> {
    this.macKey ??= (async () => {
      const got = await getJSON<{ key?: string }>(this.s, 'value-mac-key');
      if (got?.key) return Buffer.from(got.key, 'base64');
      const key = randomBytes(32);
      await putJSON(this.s, 'value-mac-key', { key: key.toString('base64') });
      return key;
    })().catch((e: unknown) => {
      this.macKey = null; // a storage error: try again next time
      throw e;
    });
    return this.macKey;
  }

  getApp(name: string): Promise<GithubAppRecord | null> {
    return getJSON<GithubAppRecord>(this.s, `github-apps/${name}`);
  }
  putApp(a: GithubAppRecord): Promise<void> {
    return putJSON(this.s, `github-apps/${a.name}`, a);
  }
  deleteApp(name: string): Promise<void> {
    return this.s.delete(`github-apps/${name}`);
  }
  async appNames(): Promise<string[]> {
    return (await this.s.list('github-apps/')).filter((n) => !n.endsWith('/'));
  }

  putOp(seq: string, e: QueueEntry): Promise<void> {
    return putJSON(this.s, `queue/${seq}`, e);
  }
  getOp(seq: string): Promise<QueueEntry | null> {
    return getJSON<QueueEntry>(this.s, `queue/${seq}`);
  }
  deleteOp(seq: string): Promise<void> {
    return this.s.delete(`queue/${seq}`);
  }
  /** Sequence numbers of queued operations, oldest first. */
  async opSeqs(): Promise<string[]> {
    return (await this.s.list('queue/')).filter((n) => !n.endsWith('/')).sort();
  }
}

/** Freeze `v` and everything it holds (cached records are shared with callers, never copied per read). */
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v as object)) deepFreeze(x);
  }
  return v;
}
