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

  getLink(type: string, name: string, id: string): Promise<LinkRecord | null> {
    return getJSON<LinkRecord>(this.s, `links/${type}/${name}/${id}`);
  }
  putLink(l: LinkRecord): Promise<void> {
    return putJSON(this.s, `links/${l.dest_type}/${l.dest_name}/${l.id}`, l);
  }
  deleteLink(type: string, name: string, id: string): Promise<void> {
    return this.s.delete(`links/${type}/${name}/${id}`);
  }
  /** Link ids of one destination. */
  async linkIds(type: string, name: string): Promise<string[]> {
    return (await this.s.list(`links/${type}/${name}/`)).filter((n) => !n.endsWith('/'));
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
