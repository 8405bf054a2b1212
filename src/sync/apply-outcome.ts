/**
 * What an attempt on a link does to its record: a pure function from the record as stored now
 * (set or remove may have changed it while the attempt talked to the provider) and the attempt's
 * outcome to the record to store, or to the decision to drop it. No I/O, no clock: the worker
 * (worker.ts) reads the record under the link lock, calls this, and writes what it returns.
 */
import type { SyncFailure } from './failure.js';
import { ERROR_STATUSES, worstStatus, type EntryState, type LinkRecord, type SyncStatus } from './types.js';

/** A status that applies to the whole link (a failure before any entry, or the secret's absence). */
export interface LinkStatus {
  status: SyncStatus;
  error?: string;
}

/** What one attempt on a link found and did (see link-sync.ts). */
export interface LinkOutcome {
  /** New state of each entry the attempt touched; null: the entry is gone. */
  results: Map<string, EntryState | null>;
  /** A link-wide status (mount gone, bad configuration, KV read error, secret absent), or null. */
  linkStatus: LinkStatus | null;
  /** The failure to retry later, if any. */
  retry?: SyncFailure;
  /** KV version now at the provider (0: none), when the attempt completed. */
  syncedVersion?: number;
  /** Every entry is gone at the provider (remove or purge): the link may be dropped. */
  removeLink: boolean;
  /** The link's generation the attempt worked on (a set or remove since bumps it). */
  generation: number;
}

/** Facts of the moment the outcome is stored. */
export interface ApplyContext {
  /** ISO time of the write. */
  now: string;
  /** A newer trigger of the link is already queued (and it is not being removed): SYNCED is stale. */
  queuedAgain: boolean;
  /** Revision of the destination the attempt used. */
  destRevision: number;
}

/** The record to store, or the last state of a record to delete. */
export type Applied = { drop: false; record: LinkRecord } | { drop: true; record: LinkRecord };

/** Apply `o` to the current record `cur`. */
export function applyOutcome(cur: LinkRecord, o: LinkOutcome, ctx: ApplyContext): Applied {
  const { now } = ctx;
  if (o.removeLink && cur.generation === o.generation) {
    // Unsynced everywhere and no set since: the link goes; its last state is what waiters see.
    const last: LinkRecord = {
      ...cur,
      entries: Object.fromEntries([...o.results].filter(([, v]) => v !== null)) as Record<string, EntryState>,
      sync_status: 'UNSYNCED',
      updated_at: now,
    };
    delete last.error;
    return { drop: true, record: last };
  }
  const entries: Record<string, EntryState> = { ...cur.entries };
  for (const [sub, st] of o.results) {
    if (st === null) delete entries[sub];
    else entries[sub] = st;
  }
  const linkStatus = o.linkStatus;
  // A link-wide failure (mount gone, bad configuration, KV read error) applies to every entry.
  if (linkStatus && ERROR_STATUSES.has(linkStatus.status)) {
    for (const [sub, st] of Object.entries(entries)) {
      if (!o.results.has(sub))
        entries[sub] = { ...st, sync_status: linkStatus.status, error: linkStatus.error, updated_at: now };
    }
  }
  // A newer trigger is queued behind this run: what we wrote is already stale.
  if (ctx.queuedAgain)
    for (const [sub, st] of Object.entries(entries))
      if (st.sync_status === 'SYNCED') entries[sub] = { ...st, sync_status: 'PENDING' };
  const statuses = Object.values(entries).map((e) => e.sync_status);
  let status = linkStatus?.status ?? (statuses.length ? worstStatus(statuses, 'PENDING') : cur.sync_status);
  if (ctx.queuedAgain && status === 'SYNCED') status = 'PENDING';
  const next: LinkRecord = { ...cur, entries, sync_status: status, updated_at: now, dest_revision: ctx.destRevision };
  const err = linkStatus?.error ?? Object.values(entries).find((e) => ERROR_STATUSES.has(e.sync_status))?.error;
  if (err && ERROR_STATUSES.has(next.sync_status)) next.error = err;
  else delete next.error;
  if (o.syncedVersion !== undefined) next.synced_version = o.syncedVersion;
  return { drop: false, record: next };
}
