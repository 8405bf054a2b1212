/**
 * Reconciliation: a scan of every link, at start and every `reconcileMs`, that queues the links
 * that are due: being removed or purged, left PENDING (by a crash, a full queue, or an operation
 * never stored), failed in a way worth retrying, a client error after the destination changed, or
 * a secret whose KV version differs from the version last pushed (a missed change event).
 */
import type { Logger } from '../framework/context.js';
import { DESTINATION_TYPES } from './destinations/index.js';
import type { KvSource } from './kv-source.js';
import type { SyncStore } from './store.js';
import { linkKey, type DestinationRecord, type LinkRecord, type SyncStatus } from './types.js';

/** Failures worth a look at without waiting for a new trigger. */
const RECONCILE_RETRY: ReadonlySet<SyncStatus> = new Set([
  'PENDING',
  'UNKNOWN',
  'INTERNAL_VAULT_ERROR',
  'EXTERNAL_SERVICE_ERROR',
]);

/** Whether a link is due by its records alone (no need to read its secret). */
export function dueByRecord(link: LinkRecord, dest: DestinationRecord): boolean {
  if (link.removing || dest.purge_initiated_at) return true;
  const statuses = [link.sync_status, ...Object.values(link.entries).map((e) => e.sync_status)];
  if (statuses.some((s) => RECONCILE_RETRY.has(s))) return true;
  return statuses.includes('CLIENT_SIDE_ERROR') && link.dest_revision !== dest.revision;
}

/** Whether a link whose secret is at `version` (0: none) has not pushed that version. */
export function dueByVersion(link: LinkRecord, version: number): boolean {
  return version !== (link.synced_version ?? -1);
}

/** The queue as reconciliation sees it. */
export interface ReconcileQueue {
  /** An operation on the link is queued or running. */
  busy(key: string): boolean;
  hasRoom(key: string): boolean;
  enqueue(key: string): Promise<void>;
}

/** The periodic scan and its timer. */
export class Reconciler {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly deps: {
      store: SyncStore;
      kv: KvSource;
      logger: Logger;
      queue: ReconcileQueue;
      intervalMs: () => number;
    },
  ) {}

  /** Queue every due link (until the queue is full); returns how many were queued. */
  async scan(): Promise<number> {
    const { store } = this.deps;
    let queued = 0;
    for (const type of Object.keys(DESTINATION_TYPES)) {
      for (const name of await store.destNames(type as never)) {
        const dest = await store.getDest(type, name);
        if (!dest) continue;
        for (const id of await store.linkIds(type, name)) {
          if (this.stopped) return queued;
          const key = linkKey(type, name, id);
          if (this.deps.queue.busy(key)) continue;
          const link = await store.getLink(type, name, id);
          if (!link) continue;
          if (!(dueByRecord(link, dest) || (await this.secretChanged(link)))) continue;
          if (!this.deps.queue.hasRoom(key)) return queued;
          await this.deps.queue.enqueue(key);
          queued++;
        }
      }
    }
    return queued;
  }

  /** Whether the link's secret has a version other than the one last pushed (a failed read counts as changed). */
  private async secretChanged(link: LinkRecord): Promise<boolean> {
    const mount = this.deps.kv.mount(link.accessor);
    if (!mount) return false;
    try {
      const cur = await this.deps.kv.readLatest(mount, link.secret_name);
      return dueByVersion(link, cur?.version ?? 0);
    } catch {
      return true;
    }
  }

  /** Scan after `delay`, then every `intervalMs`. */
  schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.scan()
        .catch((e) => this.deps.logger.warn('sync reconciliation failed', { error: (e as Error)?.message }))
        .finally(() => this.schedule(this.deps.intervalMs()));
    }, delay);
    this.timer.unref?.();
  }

  /** Stop scanning (a scan under way ends at its next link). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
