/**
 * Storage layout of secret sync (under sys/sync/, behind the barrier):
 *   config                      SyncConfig
 *   destinations/<type>/<name>  DestinationRecord (credentials included; the barrier encrypts them)
 *   links/<type>/<name>/<id>    LinkRecord (id = encodeURIComponent(accessor/secret_name))
 *   queue/<seq>                 QueueEntry (durable operations; survive restarts)
 */
import { getJSON, putJSON, type Storage } from '../storage/backend.js';
import { DEFAULT_SYNC_CONFIG, type DestinationRecord, type DestinationType, type LinkRecord, type SyncConfig } from './types.js';

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

  getDest(type: string, name: string): Promise<DestinationRecord | null> {
    return getJSON<DestinationRecord>(this.s, `destinations/${type}/${name}`);
  }
  putDest(d: DestinationRecord): Promise<void> {
    return putJSON(this.s, `destinations/${d.type}/${d.name}`, d);
  }
  deleteDest(type: string, name: string): Promise<void> {
    return this.s.delete(`destinations/${type}/${name}`);
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
          if (l) m.set(id, l);
        }
        this.linkCache.set(key, m);
        this.loading.delete(key);
        return m;
      })();
      this.loading.set(key, p);
    }
    return p;
  }

  /** A copy of a link record, or null. */
  async getLink(type: string, name: string, id: string): Promise<LinkRecord | null> {
    const l = (await this.linksFor(type, name)).get(id);
    return l ? structuredClone(l) : null;
  }
  async putLink(l: LinkRecord): Promise<void> {
    const m = await this.linksFor(l.dest_type, l.dest_name);
    await putJSON(this.s, `links/${l.dest_type}/${l.dest_name}/${l.id}`, l);
    m.set(l.id, structuredClone(l));
  }
  async deleteLink(type: string, name: string, id: string): Promise<void> {
    const m = await this.linksFor(type, name);
    await this.s.delete(`links/${type}/${name}/${id}`);
    m.delete(id);
  }
  /** Link ids of one destination, sorted. */
  async linkIds(type: string, name: string): Promise<string[]> {
    return [...(await this.linksFor(type, name)).keys()].sort();
  }
  /** Every link of a destination (read-only views; do not mutate). */
  async links(type: string, name: string): Promise<readonly LinkRecord[]> {
    const m = await this.linksFor(type, name);
    return [...m.keys()].sort().map((id) => m.get(id)!);
  }
  /** Forget a destination's cached links (after it is deleted). */
  forgetLinks(type: string, name: string): void {
    this.linkCache.delete(`${type}/${name}`);
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
