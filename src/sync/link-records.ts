/**
 * How set, remove, a KV change and a destination change rewrite a link record before the worker
 * runs: pure functions (the callers read and store the record under the link lock).
 */
import type { MountInfo } from '../framework/context.js';
import type { EntryState, Granularity, LinkRecord } from './types.js';

/** Every entry `PENDING` at `now`; `clearErrors` also drops their errors (set, remove). */
function pendingEntries(l: LinkRecord, now: string, clearErrors: boolean): Record<string, EntryState> {
  return Object.fromEntries(
    Object.entries(l.entries).map(([k, e]) => [
      k,
      clearErrors
        ? { ...e, sync_status: 'PENDING' as const, error: undefined, updated_at: now }
        : { ...e, sync_status: 'PENDING' as const, updated_at: now },
    ]),
  );
}

/** Due again after its secret or its destination changed: the link and every entry PENDING. */
export function markedPending(l: LinkRecord, now: string): LinkRecord {
  return { ...l, sync_status: 'PENDING', updated_at: now, entries: pendingEntries(l, now, false) };
}

/** What `associations/set` links: a secret of a KV v2 mount, with the destination's naming now. */
export interface LinkTarget {
  id: string;
  type: LinkRecord['dest_type'];
  name: string;
  mount: MountInfo;
  secret: string;
  granularity: Granularity;
  template: string;
}

/**
 * The record `associations/set` stores: `cur` refreshed (no longer being removed, a new
 * generation, the destination's naming now, every entry PENDING), or a new link.
 */
export function linkForSet(cur: LinkRecord | null, t: LinkTarget, now: string): LinkRecord {
  const next: LinkRecord = cur
    ? {
        ...cur,
        removing: false,
        generation: cur.generation + 1,
        granularity: t.granularity,
        template: t.template,
        mount: t.mount.path,
        sync_status: 'PENDING',
        updated_at: now,
        entries: pendingEntries(cur, now, true),
      }
    : {
        id: t.id,
        dest_type: t.type,
        dest_name: t.name,
        accessor: t.mount.accessor,
        mount: t.mount.path,
        secret_name: t.secret,
        granularity: t.granularity,
        template: t.template,
        generation: 1,
        created_at: now,
        sync_status: 'PENDING',
        updated_at: now,
        entries:
          t.granularity === 'secret-path' ? { '': { sync_status: 'PENDING', updated_at: now, present: false } } : {},
      };
  delete next.error;
  return next;
}

/** The record `associations/remove` stores: being removed, a new generation, every entry PENDING. */
export function linkForRemove(cur: LinkRecord, now: string): LinkRecord {
  return {
    ...cur,
    removing: true,
    generation: cur.generation + 1,
    sync_status: 'PENDING',
    updated_at: now,
    entries: pendingEntries(cur, now, true),
  };
}
