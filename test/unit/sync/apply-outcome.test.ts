/** applyOutcome: what one attempt's outcome does to a link record, without a worker, storage or clock. */
import { describe, expect, it } from 'vitest';
import { applyOutcome, type ApplyContext, type LinkOutcome } from '../../../src/sync/apply-outcome.js';
import { SyncFailure } from '../../../src/sync/failure.js';
import type { EntryState, LinkRecord } from '../../../src/sync/types.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:05.000Z';
const ctx: ApplyContext = { now: T1, queuedAgain: false, destRevision: 3 };

/** A frozen link record (as the store hands them out), with `entries`. */
function link(entries: Record<string, EntryState>, over: Partial<LinkRecord> = {}): LinkRecord {
  const l: LinkRecord = {
    id: 'kv_1%2Fapp',
    dest_type: 'provider-a-sm',
    dest_name: 'aws',
    accessor: 'kv_1',
    mount: 'secret/',
    secret_name: 'app',
    granularity: 'secret-key',
    template: '{{ .SecretKey }}',
    generation: 2,
    created_at: T0,
    sync_status: 'PENDING',
    updated_at: T0,
    entries,
    ...over,
  };
  return Object.freeze(l);
}

function outcome(over: Partial<LinkOutcome>): LinkOutcome {
  return { results: new Map(), linkStatus: null, removeLink: false, generation: 2, ...over };
}

const pending = (external_name?: string): EntryState => ({
  sync_status: 'PENDING',
  updated_at: T0,
  present: external_name !== undefined,
  ...(external_name ? { external_name } : {}),
});
const synced = (external_name: string): EntryState => ({
  sync_status: 'SYNCED',
  updated_at: T1,
  external_name,
  present: true,
});

describe('applyOutcome', () => {
  it('PENDING -> SYNCED: entries from the outcome, the version pushed, the destination revision, no error', () => {
    const cur = link(
      { '': pending() },
      { granularity: 'secret-path', error: 'old failure', sync_status: 'EXTERNAL_SERVICE_ERROR' },
    );
    const a = applyOutcome(cur, outcome({ results: new Map([['', synced('app')]]), syncedVersion: 7 }), ctx);
    expect(a.drop).toBe(false);
    expect(a.record.sync_status).toBe('SYNCED');
    expect(a.record.entries['']).toEqual(synced('app'));
    expect(a.record.synced_version).toBe(7);
    expect(a.record.dest_revision).toBe(3);
    expect(a.record.updated_at).toBe(T1);
    expect(a.record).not.toHaveProperty('error');
    // The stored record is not touched.
    expect(cur.sync_status).toBe('EXTERNAL_SERVICE_ERROR');
    expect(cur.entries['']!.sync_status).toBe('PENDING');
  });

  it("one entry failing makes the link show the worst status and that entry's error; others keep their outcome", () => {
    const cur = link({ a: pending('a'), b: pending('b') });
    const failed: EntryState = {
      ...pending('b'),
      sync_status: 'EXTERNAL_SERVICE_ERROR',
      error: 'provider answered 503',
      updated_at: T1,
    };
    const a = applyOutcome(
      cur,
      outcome({
        results: new Map([
          ['a', synced('a')],
          ['b', failed],
        ]),
        retry: new SyncFailure('EXTERNAL_SERVICE_ERROR', 'provider answered 503', { retryable: true }),
      }),
      ctx,
    );
    expect(a.record.sync_status).toBe('EXTERNAL_SERVICE_ERROR');
    expect(a.record.error).toBe('provider answered 503');
    expect(a.record.entries.a!.sync_status).toBe('SYNCED');
    // A failed attempt does not claim a version.
    expect(a.record.synced_version).toBeUndefined();
  });

  it('a link-wide failure applies to every entry the attempt did not reach', () => {
    const cur = link({ a: synced('a'), b: synced('b') }, { sync_status: 'SYNCED', synced_version: 4 });
    const a = applyOutcome(
      cur,
      outcome({ linkStatus: { status: 'INTERNAL_VAULT_ERROR', error: 'mount with accessor kv_1 no longer exists' } }),
      ctx,
    );
    expect(a.record.sync_status).toBe('INTERNAL_VAULT_ERROR');
    expect(a.record.error).toBe('mount with accessor kv_1 no longer exists');
    for (const e of Object.values(a.record.entries)) {
      expect(e.sync_status).toBe('INTERNAL_VAULT_ERROR');
      expect(e.error).toBe('mount with accessor kv_1 no longer exists');
      expect(e.updated_at).toBe(T1);
      expect(e.present).toBe(true);
    }
    expect(a.record.synced_version).toBe(4);
  });

  it('a newer trigger queued behind the attempt leaves it PENDING: what was written is already stale', () => {
    const cur = link({ a: pending('a') });
    const a = applyOutcome(cur, outcome({ results: new Map([['a', synced('a')]]), syncedVersion: 2 }), {
      ...ctx,
      queuedAgain: true,
    });
    expect(a.record.sync_status).toBe('PENDING');
    expect(a.record.entries.a).toEqual({ ...synced('a'), sync_status: 'PENDING' });
    expect(a.record.synced_version).toBe(2);
  });

  it('the secret gone: UNSYNCED link-wide, version 0, entries unsynced', () => {
    const cur = link({ a: synced('a') }, { sync_status: 'SYNCED', synced_version: 5 });
    const gone: EntryState = { sync_status: 'UNSYNCED', updated_at: T1, external_name: 'a', present: false };
    const a = applyOutcome(
      cur,
      outcome({ results: new Map([['a', gone]]), linkStatus: { status: 'UNSYNCED' }, syncedVersion: 0 }),
      ctx,
    );
    expect(a.drop).toBe(false);
    expect(a.record.sync_status).toBe('UNSYNCED');
    expect(a.record.entries.a).toEqual(gone);
    expect(a.record.synced_version).toBe(0);
    expect(a.record).not.toHaveProperty('error');
  });

  it('a key removed from the secret (null result) drops its entry', () => {
    const cur = link({ a: synced('a'), old: synced('old') }, { sync_status: 'SYNCED' });
    const a = applyOutcome(
      cur,
      outcome({
        results: new Map<string, EntryState | null>([
          ['a', synced('a')],
          ['old', null],
        ]),
        syncedVersion: 3,
      }),
      ctx,
    );
    expect(Object.keys(a.record.entries)).toEqual(['a']);
    expect(a.record.sync_status).toBe('SYNCED');
  });

  it('with no entries and no link-wide status the link keeps its status', () => {
    const cur = link({}, { sync_status: 'PENDING' });
    expect(applyOutcome(cur, outcome({}), ctx).record.sync_status).toBe('PENDING');
  });

  it('remove done: the link is dropped, its last state UNSYNCED with only the entries the attempt reported', () => {
    const cur = link({ a: synced('a') }, { removing: true, error: 'x' });
    const gone: EntryState = { sync_status: 'UNSYNCED', updated_at: T1, external_name: 'a', present: false };
    const a = applyOutcome(cur, outcome({ results: new Map([['a', gone]]), removeLink: true }), ctx);
    expect(a.drop).toBe(true);
    expect(a.record.sync_status).toBe('UNSYNCED');
    expect(a.record.entries).toEqual({ a: gone });
    expect(a.record).not.toHaveProperty('error');
  });

  it('remove done, but a set came in meanwhile (new generation): the link stays, with the outcome merged', () => {
    const cur = link({ a: pending('a') }, { generation: 3 });
    const gone: EntryState = { sync_status: 'UNSYNCED', updated_at: T1, external_name: 'a', present: false };
    const a = applyOutcome(cur, outcome({ results: new Map([['a', gone]]), removeLink: true, generation: 2 }), ctx);
    expect(a.drop).toBe(false);
    expect(a.record.entries.a).toEqual(gone);
    expect(a.record.sync_status).toBe('UNSYNCED');
  });
});
