/** Decisions of the sync worker kept apart from its I/O: which links reconciliation queues, and retry delays. */
import { describe, expect, it } from 'vitest';
import { retryDelay } from '../../../src/sync/backoff.js';
import { dueByRecord, dueByVersion } from '../../../src/sync/reconcile.js';
import type { DestinationRecord, LinkRecord } from '../../../src/sync/types.js';

const T = '2026-01-01T00:00:00.000Z';
const dest: DestinationRecord = {
  type: 'provider-a-sm',
  name: 'aws',
  connection: {},
  options: {
    granularity: 'secret-path',
    custom_tags: {},
    allowed_ipv4_addresses: [],
    allowed_ipv6_addresses: [],
    allowed_ports: [],
    disable_strict_networking: false,
  },
  created_at: T,
  updated_at: T,
  revision: 2,
};
function link(over: Partial<LinkRecord>): LinkRecord {
  return {
    id: 'x',
    dest_type: 'provider-a-sm',
    dest_name: 'aws',
    accessor: 'kv_1',
    mount: 'secret/',
    secret_name: 'a',
    granularity: 'secret-path',
    template: 't',
    generation: 1,
    created_at: T,
    sync_status: 'SYNCED',
    updated_at: T,
    entries: { '': { sync_status: 'SYNCED', updated_at: T, present: true } },
    synced_version: 3,
    dest_revision: 2,
    ...over,
  };
}

describe('reconciliation decisions', () => {
  it('a synced link is not due by its records; removing, purging, PENDING and retryable failures are', () => {
    expect(dueByRecord(link({}), dest)).toBe(false);
    expect(dueByRecord(link({ removing: true }), dest)).toBe(true);
    expect(dueByRecord(link({}), { ...dest, purge_initiated_at: T })).toBe(true);
    expect(dueByRecord(link({ sync_status: 'PENDING' }), dest)).toBe(true);
    expect(
      dueByRecord(
        link({ entries: { '': { sync_status: 'EXTERNAL_SERVICE_ERROR', updated_at: T, present: false } } }),
        dest,
      ),
    ).toBe(true);
  });

  it('a client error is due again only after the destination changed', () => {
    const failed = link({ sync_status: 'CLIENT_SIDE_ERROR', dest_revision: 2 });
    expect(dueByRecord(failed, dest)).toBe(false);
    expect(dueByRecord(failed, { ...dest, revision: 3 })).toBe(true);
  });

  it('a version other than the one last pushed is due (a link never pushed is due even for a missing secret)', () => {
    expect(dueByVersion(link({ synced_version: 3 }), 3)).toBe(false);
    expect(dueByVersion(link({ synced_version: 3 }), 4)).toBe(true);
    expect(dueByVersion(link({ synced_version: 0 }), 0)).toBe(false);
    expect(dueByVersion(link({ synced_version: undefined }), 0)).toBe(true);
  });
});

describe('retryDelay', () => {
  const policy = { baseMs: 100, maxMs: 10_000, maxAttempts: 4 };
  it('backs off exponentially with jitter for the first maxAttempts retries', () => {
    expect(retryDelay(policy, 1, {}, () => 0)).toBe(50);
    expect(retryDelay(policy, 1, {}, () => 1)).toBe(100);
    expect(retryDelay(policy, 3, {}, () => 1)).toBe(400);
  });
  it('honours Retry-After, capped at maxMs', () => {
    expect(retryDelay(policy, 1, { retryAfterMs: 3_000 }, () => 0)).toBe(3_000);
    expect(retryDelay(policy, 1, { retryAfterMs: 60_000 }, () => 0)).toBe(10_000);
  });
  it('after maxAttempts it waits maxMs each time, never giving up', () => {
    expect(retryDelay(policy, 4, {}, () => 0)).toBe(10_000);
    expect(retryDelay(policy, 40, { retryAfterMs: 5 }, () => 0)).toBe(10_000);
  });
});
