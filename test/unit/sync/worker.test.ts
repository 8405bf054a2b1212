/** The sync worker and service against in-memory storage, a fake KV source and a scripted fake connector. */
import { afterEach, describe, expect, it } from 'vitest';
import { InmemBackend } from '../../../src/storage/inmem.js';
import type { MountInfo } from '../../../src/framework/context.js';
import { SyncStore } from '../../../src/sync/store.js';
import { Syncer } from '../../../src/sync/worker.js';
import { QueueFullError } from '../../../src/sync/op-queue.js';
import { DEFAULT_TUNING, type SyncTuning } from '../../../src/sync/tuning.js';
import { SyncService } from '../../../src/sync/service.js';
import { SyncFailure } from '../../../src/sync/failure.js';
import type { Connector } from '../../../src/sync/destinations/common.js';
import type { LinkRecord } from '../../../src/sync/types.js';
import { FakeKv, mount, silent } from './fake-kv-source.js';

/** Records puts/deletes per destination; a script of failures; tracks concurrency. */
const global = { active: 0, maxActive: 0 };
class FakeProvider {
  readonly store = new Map<string, string>();
  readonly calls: string[] = [];
  /** Names of puts made with the `fresh` hint (no record of having written the name). */
  readonly freshPuts: string[] = [];
  failures: Array<SyncFailure | null> = [];
  failAlways: SyncFailure | null = null;
  delayMs = 0;
  active = 0;
  maxActive = 0;
  connector(): Connector {
    const run = async (what: string, fn: () => void) => {
      this.active++;
      this.maxActive = Math.max(this.maxActive, this.active);
      global.maxActive = Math.max(global.maxActive, ++global.active);
      try {
        if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
        this.calls.push(what);
        const f = this.failAlways ?? this.failures.shift();
        if (f) throw f;
        fn();
      } finally {
        this.active--;
        global.active--;
      }
    };
    return {
      put: (name, value, _signal, opts) => {
        if (opts?.fresh) this.freshPuts.push(name);
        return run(`put ${name}`, () => this.store.set(name, value));
      },
      remove: (name) => run(`remove ${name}`, () => this.store.delete(name)),
      close() {},
    };
  }
}

/** In-memory storage that records the keys written and deleted. */
class CountingBackend extends InmemBackend {
  readonly puts: string[] = [];
  readonly deletes: string[] = [];
  override async put(key: string, value: Buffer): Promise<void> {
    this.puts.push(key);
    return super.put(key, value);
  }
  override async delete(key: string): Promise<void> {
    this.deletes.push(key);
    return super.delete(key);
  }
}

const tuning: SyncTuning = {
  ...DEFAULT_TUNING,
  backoff: { baseMs: 5, maxMs: 20, maxAttempts: 4 },
  setWaitMs: 2000,
  reconcileMs: 3_600_000,
  concurrency: 4,
  perDestination: 2,
};

const open: Syncer[] = [];
function harness(
  opts: {
    storage?: InmemBackend;
    tuning?: Partial<SyncTuning>;
    kv?: FakeKv;
    providers?: Map<string, FakeProvider>;
  } = {},
) {
  const storage = opts.storage ?? new InmemBackend();
  const kv = opts.kv ?? new FakeKv();
  const providers = opts.providers ?? new Map<string, FakeProvider>();
  const provider = (name: string) => {
    if (!providers.has(name)) providers.set(name, new FakeProvider());
    return providers.get(name)!;
  };
  const store = new SyncStore(storage);
  const syncer = new Syncer({
    store,
    kv,
    clock: { now: () => Date.now() },
    logger: silent,
    tuning: { ...tuning, ...opts.tuning },
    connect: (dest) => provider(dest.name).connector(),
    random: () => 0.5,
  });
  open.push(syncer);
  const service = new SyncService(store, syncer, kv, { now: () => Date.now() }, silent);
  return { storage, kv, store, syncer, service, provider };
}

async function until<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, ms = 3000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const link = (store: SyncStore, dest: string, secret: string) =>
  store.getLink('provider-a-sm', dest, encodeURIComponent(`${mount.accessor}/${secret}`));
const allowAll = () => true;

afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

describe('sync worker', () => {
  it('pushes a secret-path link as one JSON value and records SYNCED with the version', async () => {
    const h = harness();
    await h.syncer.start();
    h.kv.write('app/db', { user: 'u', pass: 'p' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    const view = (await h.service.setAssociation('provider-a-sm', 'd', 'secret', 'app/db', allowAll)) as {
      associated_secrets: Record<string, { sync_status: string }>;
    };
    expect(view.associated_secrets[`${mount.accessor}/app/db`]!.sync_status).toBe('SYNCED');
    expect(h.provider('d').store.get(`vault/${mount.accessor}/app/db`)).toBe('{"pass":"p","user":"u"}');
    expect((await link(h.store, 'd', 'app/db'))!.synced_version).toBe(1);
  });

  it('hints "fresh" only for names it has no record of having written', async () => {
    const h = harness();
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    const p = h.provider('d');
    const name = `vault/${mount.accessor}/s`;
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    expect(p.freshPuts).toEqual([name]); // first sync
    h.kv.write('s', { a: '2' });
    await h.service.onKvEvent({
      kind: 'data-write',
      mountAccessor: mount.accessor,
      mountPath: 'secret/',
      path: 's',
      version: 2,
      currentVersion: 2,
    });
    await until(
      () => p.store.get(name),
      (v) => v === '{"a":"2"}',
    );
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll); // refresh of a synced link
    expect(p.calls.filter((c) => c.startsWith('put'))).toHaveLength(3);
    expect(p.freshPuts).toEqual([name]);
    // Unsynced (secret deleted), then written again: the name is gone, so it is fresh again.
    h.kv.data.delete('s');
    await h.service.onKvEvent({
      kind: 'metadata-delete',
      mountAccessor: mount.accessor,
      mountPath: 'secret/',
      path: 's',
      version: 0,
      currentVersion: 0,
    });
    await until(
      () => link(h.store, 'd', 's'),
      (l) => l?.sync_status === 'UNSYNCED',
    );
    h.kv.write('s', { a: '3' });
    await h.service.onKvEvent({
      kind: 'data-write',
      mountAccessor: mount.accessor,
      mountPath: 'secret/',
      path: 's',
      version: 1,
      currentVersion: 1,
    });
    await until(
      () => p.store.get(name),
      (v) => v === '{"a":"3"}',
    );
    expect(p.freshPuts).toEqual([name, name]);
    // A template change on refresh: the new name is fresh.
    await h.service.writeDestination('provider-a-sm', 'd', { secret_name_template: 'team/{{ .SecretPath }}' }, 'post');
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    expect(p.freshPuts).toEqual([name, name, 'team/s']);
  });

  it('secret-key granularity pushes each key and deletes keys that disappear from the secret', async () => {
    const h = harness();
    await h.syncer.start();
    h.kv.write('s', { a: '1', b: { x: 1 } });
    await h.service.writeDestination('provider-a-sm', 'd', { granularity: 'secret-key' }, 'post');
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    const p = h.provider('d');
    expect(Object.fromEntries(p.store)).toEqual({
      [`vault/${mount.accessor}/s/a`]: '1',
      [`vault/${mount.accessor}/s/b`]: '{"x":1}',
    });
    h.kv.write('s', { a: '2' });
    await h.service.onKvEvent({
      kind: 'data-write',
      mountAccessor: mount.accessor,
      mountPath: 'secret/',
      path: 's',
      version: 2,
      currentVersion: 2,
    });
    await until(
      () => Object.fromEntries(p.store),
      (s) => Object.keys(s).length === 1 && s[`vault/${mount.accessor}/s/a`] === '2',
    );
    const l = await until(
      () => link(h.store, 'd', 's'),
      (l) => l?.sync_status === 'SYNCED',
    );
    expect(Object.keys(l!.entries)).toEqual(['a']);
  });

  it('unsyncs when the secret is gone and reports UNSYNCED', async () => {
    const h = harness();
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    h.kv.data.delete('s');
    await h.service.onKvEvent({
      kind: 'metadata-delete',
      mountAccessor: mount.accessor,
      mountPath: 'secret/',
      path: 's',
      version: 0,
      currentVersion: 0,
    });
    const l = await until(
      () => link(h.store, 'd', 's'),
      (l) => l?.sync_status === 'UNSYNCED',
    );
    expect(l!.entries['']!.present).toBe(false);
    expect(h.provider('d').store.size).toBe(0);
  });

  it('retries a retryable failure with backoff: EXTERNAL_SERVICE_ERROR, then SYNCED', async () => {
    const h = harness();
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    const p = h.provider('d');
    p.failures = [
      new SyncFailure('EXTERNAL_SERVICE_ERROR', 'put: HTTP 503', { retryable: true }),
      new SyncFailure('EXTERNAL_SERVICE_ERROR', 'put: HTTP 429', { retryable: true, retryAfterMs: 30 }),
    ];
    const view = (await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll)) as {
      associated_secrets: Record<string, { sync_status: string; error?: string }>;
    };
    const rec = view.associated_secrets[`${mount.accessor}/s`]!;
    expect(rec.sync_status).toBe('EXTERNAL_SERVICE_ERROR');
    expect(rec.error).toMatch(/503/);
    const l = await until(
      () => link(h.store, 'd', 's'),
      (l) => l?.sync_status === 'SYNCED',
    );
    expect(l!.error).toBeUndefined();
    expect(p.calls.filter((c) => c.startsWith('put'))).toHaveLength(3);
    expect(h.syncer.queued).toBe(0);
  });

  it('does not retry a client error (4xx): one attempt, CLIENT_SIDE_ERROR with the cause', async () => {
    const h = harness();
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    const p = h.provider('d');
    p.failAlways = new SyncFailure('CLIENT_SIDE_ERROR', 'put: HTTP 403 AccessDeniedException');
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    await new Promise((r) => setTimeout(r, 100));
    const l = await link(h.store, 'd', 's');
    expect(l!.sync_status).toBe('CLIENT_SIDE_ERROR');
    expect(l!.error).toBe('put: HTTP 403 AccessDeniedException');
    expect(p.calls).toHaveLength(1);
    expect(h.syncer.queued).toBe(0);
  });

  it('self-healing: after maxAttempts a retryable failure keeps being retried at the maximum backoff until it succeeds', async () => {
    const h = harness();
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    const p = h.provider('d');
    p.failAlways = new SyncFailure('EXTERNAL_SERVICE_ERROR', 'down', { retryable: true });
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    // Well past the fast attempts: still queued (not given up), still retrying, status kept.
    await until(
      () => p.calls.length,
      (n) => n >= tuning.backoff.maxAttempts + 3,
    );
    expect(h.syncer.queued).toBe(1);
    expect((await link(h.store, 'd', 's'))!.sync_status).toBe('EXTERNAL_SERVICE_ERROR');
    p.failAlways = null;
    // No new trigger and no reconciliation scan (reconcileMs is an hour here): the retry heals it.
    await until(
      () => link(h.store, 'd', 's'),
      (l) => l?.sync_status === 'SYNCED',
    );
    await until(
      () => h.syncer.queued,
      (n) => n === 0,
    );
  });

  it('a rate limit holds every operation of the destination until the provider says so, not only the one that hit it', async () => {
    const h = harness({ tuning: { backoff: { baseMs: 5, maxMs: 2_000, maxAttempts: 4 }, setWaitMs: 0 } });
    await h.syncer.start();
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    await h.service.writeDestination('provider-a-sm', 'other', {}, 'post');
    const p = h.provider('d');
    const q = h.provider('other');
    p.failures = [
      new SyncFailure('EXTERNAL_SERVICE_ERROR', 'put secret: HTTP 403 (rate limited)', {
        retryable: true,
        rateLimited: true,
        retryAfterMs: 600,
      }),
    ];
    h.kv.write('s0', { a: '0' });
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's0', allowAll);
    await until(
      () => p.calls.length,
      (n) => n === 1,
    );
    const limitedAt = Date.now();
    for (let i = 1; i <= 5; i++) {
      h.kv.write(`s${i}`, { a: String(i) });
      await h.service.setAssociation('provider-a-sm', 'd', 'secret', `s${i}`, allowAll);
      await h.service.setAssociation('provider-a-sm', 'other', 'secret', `s${i}`, allowAll);
    }
    // Another destination is not held.
    await until(
      () => q.store.size,
      (n) => n === 5,
    );
    expect(p.calls).toHaveLength(1);
    await until(
      () => p.store.size,
      (n) => n === 6,
      5_000,
    );
    expect(Date.now() - limitedAt).toBeGreaterThanOrEqual(500);
  });

  it('reports SYNCING while a push is at the provider and UNSYNCING while a delete is, then the outcome', async () => {
    const h = harness({ tuning: { setWaitMs: 0 } });
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    const p = h.provider('d');
    p.delayMs = 400;
    const status = async () => {
      const v = (await h.service.associations('provider-a-sm', 'd')) as {
        associated_secrets: Record<string, { sync_status: string }>;
      };
      return Object.values(v.associated_secrets)
        .map((r) => r.sync_status)
        .join(',');
    };
    const dests = async () =>
      Object.values(
        ((await h.service.destinationsOf('secret', 's'))?.associated_destinations ?? {}) as Record<
          string,
          { sync_status: string }
        >,
      )
        .map((r) => r.sync_status)
        .join(',');
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    await until(status, (st) => st === 'SYNCING');
    expect(await dests()).toBe('SYNCING');
    await until(status, (st) => st === 'SYNCED');
    // Never stored: the record in storage says PENDING or the outcome, not the in-flight status.
    expect((await link(h.store, 'd', 's'))!.sync_status).toBe('SYNCED');
    await h.service.removeAssociation('provider-a-sm', 'd', 'secret', 's');
    await until(status, (st) => st === 'UNSYNCING');
    expect((await link(h.store, 'd', 's'))!.sync_status).toBe('PENDING');
    await until(status, (st) => st === '');
  });

  it('keeps the JSON of association maps equal to the serialization of the map (Go escaping included), through changes', async () => {
    const h = harness();
    await h.syncer.start();
    await h.service.writeDestination(
      'provider-a-sm',
      'd',
      { granularity: 'secret-key', secret_name_template: 'v/{{ .SecretPath }}/{{ .SecretKey }}' },
      'post',
    );
    const go = (v: unknown) =>
      JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
    const check = async (answer: Record<string, unknown>) => {
      const pieces = h.service.jsonOf(answer);
      expect(pieces).toBeDefined();
      const json = Buffer.concat(pieces!).toString('utf8');
      expect(json).toBe(go(answer));
      expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(answer)));
    };
    for (const [path, data] of [
      ['a&b', { 'x<y': '1', z: '2' }],
      ['c', { k: 'v' }],
      ['e>f', { '\u2028': 'w' }],
    ] as const) {
      h.kv.write(path, data);
      await check(await h.service.setAssociation('provider-a-sm', 'd', 'secret', path, allowAll));
    }
    await check(await h.service.associations('provider-a-sm', 'd'));
    h.kv.write('c', { k: 'v2', k2: 'new' });
    await check(await h.service.setAssociation('provider-a-sm', 'd', 'secret', 'c', allowAll));
    await h.service.removeAssociation('provider-a-sm', 'd', 'secret', 'a&b');
    await until(
      () => h.syncer.queued,
      (n) => n === 0,
    );
    const after = await h.service.associations('provider-a-sm', 'd');
    await check(after);
    expect(Object.keys(after.associated_secrets as object).some((k) => k.includes('a&b'))).toBe(false);
  });

  it('keeps the JSON of a large association map (joined in blocks) equal to its serialization through adds, changes and removals anywhere', async () => {
    const h = harness();
    await h.syncer.start();
    await h.service.writeDestination('provider-a-sm', 'big', {}, 'post');
    const check = (answer: Record<string, unknown>) => {
      const json = Buffer.concat(h.service.jsonOf(answer)!).toString('utf8');
      expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(answer)));
      expect(json).toBe(JSON.stringify(answer));
      return Object.keys(answer.associated_secrets as object).length;
    };
    // Out of order, so links land inside existing blocks as well as at both ends.
    const order = Array.from({ length: 300 }, (_, i) => (i * 7919) % 300);
    for (const i of order) {
      h.kv.write(`p/${i}`, { v: String(i) });
      check(await h.service.setAssociation('provider-a-sm', 'big', 'secret', `p/${i}`, allowAll));
    }
    await until(
      () => h.syncer.queued,
      (n) => n === 0,
    );
    expect(check(await h.service.associations('provider-a-sm', 'big'))).toBe(300);
    for (const i of [0, 150, 299, 77]) await h.service.removeAssociation('provider-a-sm', 'big', 'secret', `p/${i}`);
    h.kv.write('p/5', { v: 'changed' });
    await until(
      () => h.syncer.queued,
      (n) => n === 0,
    );
    const answer = await h.service.associations('provider-a-sm', 'big');
    expect(check(answer)).toBe(296);
    expect(
      Object.values(answer.associated_secrets as Record<string, { sync_status: string }>).every(
        (r) => r.sync_status === 'SYNCED',
      ),
    ).toBe(true);
  });

  it('keeps to the per-destination and global concurrency limits', async () => {
    const h = harness({ tuning: { concurrency: 3, perDestination: 2, setWaitMs: 0 } });
    global.maxActive = 0;
    await h.syncer.start();
    for (const d of ['d1', 'd2']) {
      await h.service.writeDestination('provider-a-sm', d, {}, 'post');
      h.provider(d).delayMs = 15;
    }
    for (let i = 0; i < 12; i++) {
      h.kv.write(`s${i}`, { v: String(i) });
      for (const d of ['d1', 'd2']) await h.service.setAssociation('provider-a-sm', d, 'secret', `s${i}`, allowAll);
    }
    await until(
      () => h.syncer.queued,
      (n) => n === 0,
      5000,
    );
    const p1 = h.provider('d1');
    const p2 = h.provider('d2');
    expect(p1.store.size).toBe(12);
    expect(p2.store.size).toBe(12);
    expect(p1.maxActive).toBeLessThanOrEqual(2);
    expect(p2.maxActive).toBeLessThanOrEqual(2);
    expect(global.maxActive).toBe(3);
  });

  it('limits provider calls per destination, while the local work of further operations overlaps them', async () => {
    class SlowKv extends FakeKv {
      reading = 0;
      override async readLatest(m: MountInfo, path: string) {
        this.reading++;
        try {
          await new Promise((r) => setTimeout(r, 10));
          return await super.readLatest(m, path);
        } finally {
          this.reading--;
        }
      }
    }
    const kv = new SlowKv();
    const h = harness({ kv, tuning: { concurrency: 8, perDestination: 2, setWaitMs: 0 } });
    await h.syncer.start();
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    const p = h.provider('d');
    p.delayMs = 15;
    let overlap = 0;
    const orig = p.connector.bind(p);
    p.connector = () => {
      const c = orig();
      // Both provider slots busy (this call takes the second) while another operation reads its secret.
      return { ...c, put: (n, v, sig, o) => (p.active === 1 && kv.reading > 0 && overlap++, c.put(n, v, sig, o)) };
    };
    await h.service.updateConfig({ disabled: true });
    for (let i = 0; i < 12; i++) {
      kv.write(`s${i}`, { v: String(i) });
      await h.service.setAssociation('provider-a-sm', 'd', 'secret', `s${i}`, allowAll);
    }
    h.syncer.noteKvChange(); // what set read is stale: the worker reads every secret itself
    await h.service.updateConfig({ disabled: false });
    await until(
      () => h.syncer.queued,
      (n) => n === 0,
      5000,
    );
    await until(
      () => p.store.size,
      (n) => n === 12,
      5000,
    );
    expect(p.maxActive).toBe(2);
    expect(overlap).toBeGreaterThan(0);
  });

  it('storing an outcome does not hold an admission slot: the next operation calls the provider meanwhile', async () => {
    class SlowLinks extends InmemBackend {
      writing = 0;
      override async put(key: string, value: Buffer): Promise<void> {
        // Only the worker's writes of an outcome (a set without waiting stores PENDING itself).
        if (!key.startsWith('links/') || !value.toString().includes('"sync_status":"SYNCED"'))
          return super.put(key, value);
        this.writing++;
        try {
          await new Promise((r) => setTimeout(r, 30));
          return await super.put(key, value);
        } finally {
          this.writing--;
        }
      }
    }
    const storage = new SlowLinks();
    const h = harness({ storage, tuning: { concurrency: 1, perDestination: 1, setWaitMs: 0 } });
    await h.syncer.start();
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    const p = h.provider('d');
    let overlap = 0;
    const orig = p.connector.bind(p);
    p.connector = () => {
      const c = orig();
      return { ...c, put: (n, v, sig, o) => (storage.writing > 0 && overlap++, c.put(n, v, sig, o)) };
    };
    for (let i = 0; i < 4; i++) {
      h.kv.write(`s${i}`, { v: String(i) });
      await h.service.setAssociation('provider-a-sm', 'd', 'secret', `s${i}`, allowAll);
    }
    await until(
      () => Promise.all([0, 1, 2, 3].map((i) => link(h.store, 'd', `s${i}`))),
      (ls) => ls.every((l) => l?.sync_status === 'SYNCED'),
      5000,
    );
    expect(p.maxActive).toBe(1);
    expect(overlap).toBeGreaterThan(0);
  });

  it("set's read of the secret serves the first attempt, unless a KV change came in between", async () => {
    class CountingKv extends FakeKv {
      reads = 0;
      override async readLatest(m: MountInfo, path: string) {
        this.reads++;
        return super.readLatest(m, path);
      }
    }
    const kv = new CountingKv();
    const h = harness({ kv });
    await h.syncer.start();
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    kv.write('s', { a: '1' });
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    expect(kv.reads).toBe(1);
    expect(h.provider('d').store.get(`vault/${mount.accessor}/s`)).toBe('{"a":"1"}');
    // A write between set's read and the attempt: the offered version is not used.
    await h.service.updateConfig({ disabled: true });
    kv.write('t', { b: '1' });
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 't', allowAll);
    kv.write('t', { b: '2' });
    await h.service.onKvEvent({
      kind: 'data-write',
      mountAccessor: mount.accessor,
      mountPath: 'secret/',
      path: 't',
      version: 2,
      currentVersion: 2,
    });
    await h.service.updateConfig({ disabled: false });
    await until(
      () => link(h.store, 'd', 't'),
      (l) => l?.sync_status === 'SYNCED',
    );
    expect(h.provider('d').store.get(`vault/${mount.accessor}/t`)).toBe('{"b":"2"}');
    expect(h.provider('d').calls.filter((c) => c.endsWith('/t'))).toHaveLength(1);
    expect((await link(h.store, 'd', 't'))!.synced_version).toBe(2);
  });

  it('keeps queued operations in storage: a new worker on the same storage completes them', async () => {
    const storage = new InmemBackend();
    const kv = new FakeKv();
    const providers = new Map<string, FakeProvider>();
    const a = harness({ storage, kv, providers });
    await a.syncer.start();
    kv.write('s', { a: '1' });
    await a.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    await a.service.updateConfig({ disabled: true });
    await a.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    expect((await link(a.store, 'd', 's'))!.sync_status).toBe('PENDING');
    await a.syncer.close();
    expect(await a.store.opSeqs()).toHaveLength(1);
    expect(a.provider('d').store.size).toBe(0);

    const b = harness({ storage, kv, providers });
    await b.service.updateConfig({ disabled: false });
    await b.syncer.start();
    await until(
      () => link(b.store, 'd', 's'),
      (l) => l?.sync_status === 'SYNCED',
    );
    expect(b.provider('d').store.size).toBe(1);
    expect(await b.store.opSeqs()).toHaveLength(0);
  });

  it('a new association is stored once, with the outcome of its first attempt, and no queue entry', async () => {
    const storage = new CountingBackend();
    const h = harness({ storage });
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    storage.puts.length = 0;
    const view = (await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll)) as {
      associated_secrets: Record<string, { sync_status: string }>;
    };
    expect(view.associated_secrets[`${mount.accessor}/s`]!.sync_status).toBe('SYNCED');
    const key = `links/provider-a-sm/d/${encodeURIComponent(`${mount.accessor}/s`)}`;
    expect(storage.puts).toEqual([key]);
    expect(storage.deletes.filter((k) => k.startsWith('queue/'))).toEqual([]);
    // What is stored is the outcome (a fresh store reads it from storage, not from a cache).
    expect((await link(new SyncStore(storage), 'd', 's'))!.sync_status).toBe('SYNCED');
    // A refresh of an existing link stores PENDING first (a crash then re-queues it), then the outcome.
    storage.puts.length = 0;
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    expect(storage.puts).toEqual([key, key]);
  });

  it('a new association whose first attempt outlasts the wait (or with sync disabled) is stored PENDING before the answer', async () => {
    const storage = new InmemBackend();
    const h = harness({ storage, tuning: { setWaitMs: 30 } });
    await h.syncer.start();
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    h.provider('d').delayMs = 300;
    h.kv.write('slow', { a: '1' });
    const view = (await h.service.setAssociation('provider-a-sm', 'd', 'secret', 'slow', allowAll)) as {
      associated_secrets: Record<string, { sync_status: string }>;
    };
    expect(view.associated_secrets[`${mount.accessor}/slow`]!.sync_status).toBe('SYNCING'); // in flight at the provider; stored as PENDING;
    expect((await link(new SyncStore(storage), 'd', 'slow'))!.sync_status).toBe('PENDING');
    await h.service.updateConfig({ disabled: true });
    h.kv.write('held', { a: '1' });
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 'held', allowAll);
    expect((await link(new SyncStore(storage), 'd', 'held'))!.sync_status).toBe('PENDING');
    await h.service.updateConfig({ disabled: false });
    await until(
      () => link(new SyncStore(storage), 'd', 'slow'),
      (l) => l?.sync_status === 'SYNCED',
    );
    await until(
      () => link(new SyncStore(storage), 'd', 'held'),
      (l) => l?.sync_status === 'SYNCED',
    );
  });

  it('an operation still waiting after persistAfterMs gets a queue entry, deleted once it ran', async () => {
    const h = harness({ tuning: { persistAfterMs: 20 } });
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    await h.service.updateConfig({ disabled: true });
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    await until(
      () => h.store.opSeqs(),
      (q) => q.length === 1,
    );
    await h.service.updateConfig({ disabled: false });
    await until(
      () => link(h.store, 'd', 's'),
      (l) => l?.sync_status === 'SYNCED',
    );
    await until(
      () => h.store.opSeqs(),
      (q) => q.length === 0,
    );
  });

  it('operations without a queue entry are not lost in a crash: the start-up reconciliation re-queues their PENDING links', async () => {
    const storage = new InmemBackend();
    const kv = new FakeKv();
    const a = harness({ storage, kv, tuning: { perDestination: 1, setWaitMs: 0 } });
    await a.syncer.start();
    await a.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    a.provider('d').delayMs = 500; // one operation hangs in flight, the other waits behind it
    for (const s of ['x', 'y']) {
      kv.write(s, { v: s });
      await a.service.setAssociation('provider-a-sm', 'd', 'secret', s, allowAll);
    }
    expect(await a.store.opSeqs()).toEqual([]);
    // The daemon "crashes": `a` is abandoned without close(); a new worker starts on the same storage.
    const b = harness({ storage, kv });
    await b.syncer.start();
    await until(
      () => Promise.all(['x', 'y'].map((s) => link(b.store, 'd', s))),
      (ls) => ls.every((l) => l?.sync_status === 'SYNCED'),
    );
    expect(Object.fromEntries(b.provider('d').store)).toEqual({
      [`vault/${mount.accessor}/x`]: '{"v":"x"}',
      [`vault/${mount.accessor}/y`]: '{"v":"y"}',
    });
  });

  it('association maps are reused until a link changes, and show a new mount path after a remount', async () => {
    const h = harness();
    await h.syncer.start();
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    for (const s of ['b', 'a']) {
      h.kv.write(s, { v: s });
      await h.service.setAssociation('provider-a-sm', 'd', 'secret', s, allowAll);
    }
    type View = { associated_secrets: Record<string, { sync_status: string; mount: string }> };
    const v1 = (await h.service.associations('provider-a-sm', 'd')) as View;
    const v2 = (await h.service.associations('provider-a-sm', 'd')) as View;
    expect(v2.associated_secrets).toBe(v1.associated_secrets);
    expect(Object.isFrozen(v1.associated_secrets)).toBe(true);
    expect(Object.keys(v1.associated_secrets)).toEqual([`${mount.accessor}/a`, `${mount.accessor}/b`]);
    h.provider('d').failAlways = new SyncFailure('CLIENT_SIDE_ERROR', 'put: HTTP 403');
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 'b', allowAll);
    const v3 = (await h.service.associations('provider-a-sm', 'd')) as View;
    expect(v3.associated_secrets[`${mount.accessor}/b`]!.sync_status).toBe('CLIENT_SIDE_ERROR');
    expect(v3.associated_secrets[`${mount.accessor}/a`]).toBe(v1.associated_secrets[`${mount.accessor}/a`]); // unchanged link: same record
    expect(v1.associated_secrets[`${mount.accessor}/b`]!.sync_status).toBe('SYNCED'); // an earlier answer is not rewritten
    const orig = h.kv.mount.bind(h.kv);
    h.kv.mount = (p: string) => (p === mount.accessor ? { ...mount, path: 'moved/' } : orig(p));
    const v4 = (await h.service.associations('provider-a-sm', 'd')) as View;
    expect(Object.values(v4.associated_secrets).map((r) => r.mount)).toEqual(['moved', 'moved']);
    h.kv.mount = orig;
  });

  it('bounds the queue by queue_capacity; a link already queued does not take a second slot', async () => {
    const h = harness();
    await h.syncer.start();
    await h.service.updateConfig({ disabled: true, queue_capacity: 2 });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    for (const s of ['a', 'b', 'c']) h.kv.write(s, { v: s });
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 'a', allowAll);
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 'b', allowAll);
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 'a', allowAll);
    await expect(h.service.setAssociation('provider-a-sm', 'd', 'secret', 'c', allowAll)).rejects.toBeInstanceOf(
      QueueFullError,
    );
    expect(h.syncer.queued).toBe(2);
    expect(await link(h.store, 'd', 'c')).toBeNull();
  });

  it('a refresh after a template change writes the new name and deletes the old one', async () => {
    const h = harness();
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    await h.service.writeDestination('provider-a-sm', 'd', { secret_name_template: 'team/{{ .SecretPath }}' }, 'post');
    // A KV change keeps the template captured when the link was set (reference 1.5.1) ...
    expect([...h.provider('d').store.keys()]).toEqual([`vault/${mount.accessor}/s`]);
    // ... a refresh applies the new one.
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    expect([...h.provider('d').store.keys()]).toEqual(['team/s']);
  });

  it('a remove made while a push of the same link is at the provider answers after its own unsync, not after that push', async () => {
    const h = harness();
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    const p = h.provider('d');
    expect(p.store.size).toBe(1);
    // A refresh starts a push that is still at the provider when the remove comes in.
    p.delayMs = 300;
    h.kv.write('s', { a: '2' });
    const refresh = h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    await until(
      async () =>
        Object.values(
          (
            (await h.service.associations('provider-a-sm', 'd')) as {
              associated_secrets: Record<string, { sync_status: string }>;
            }
          ).associated_secrets,
        )
          .map((r) => r.sync_status)
          .join(','),
      (st) => st === 'SYNCING',
    );
    const view = (await h.service.removeAssociation('provider-a-sm', 'd', 'secret', 's')) as {
      associated_secrets: Record<string, { sync_status: string }>;
    };
    // Answered after the unsync itself: the provider no longer holds the secret.
    expect(p.store.size).toBe(0);
    expect(view.associated_secrets[`${mount.accessor}/s`]?.sync_status ?? 'gone').not.toBe('SYNCED');
    await refresh;
  });

  it('remove unsyncs, then drops the link; remove of an absent association succeeds', async () => {
    const h = harness();
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    const view = (await h.service.removeAssociation('provider-a-sm', 'd', 'secret', 's')) as {
      associated_secrets: Record<string, { sync_status: string }>;
    };
    expect(view.associated_secrets[`${mount.accessor}/s`]!.sync_status).toBe('UNSYNCED');
    expect(await link(h.store, 'd', 's')).toBeNull();
    expect(h.provider('d').store.size).toBe(0);
    const again = (await h.service.removeAssociation('provider-a-sm', 'd', 'secret', 's')) as {
      associated_secrets: Record<string, unknown>;
    };
    expect(again.associated_secrets).toEqual({});
  });

  it('reconciliation re-syncs a secret whose change event was missed', async () => {
    const h = harness();
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    h.kv.write('s', { a: '2' }); // no event
    expect(await h.syncer.reconcile()).toBe(1);
    await until(
      () => h.provider('d').store.get(`vault/${mount.accessor}/s`),
      (v) => v === '{"a":"2"}',
    );
    expect(await h.syncer.reconcile()).toBe(0);
  });

  it('marks a link INTERNAL_VAULT_ERROR when its mount no longer exists', async () => {
    const h = harness();
    await h.syncer.start();
    h.kv.write('s', { a: '1' });
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', allowAll);
    const orig = h.kv.mount.bind(h.kv);
    h.kv.mount = () => undefined;
    await h.syncer.enqueue(`provider-a-sm/d/${encodeURIComponent(`${mount.accessor}/s`)}`);
    const l = (await until(
      () => link(h.store, 'd', 's'),
      (l) => l?.sync_status === 'INTERNAL_VAULT_ERROR',
    )) as LinkRecord;
    expect(l.error).toMatch(/no longer exists/);
    h.kv.mount = orig;
  });

  it('purge unsyncs every association, then deletes the destination', async () => {
    const h = harness();
    await h.syncer.start();
    await h.service.writeDestination('provider-a-sm', 'd', {}, 'post');
    for (const s of ['a', 'b']) {
      h.kv.write(s, { v: s });
      await h.service.setAssociation('provider-a-sm', 'd', 'secret', s, allowAll);
    }
    await expect(h.service.deleteDestination('provider-a-sm', 'd', { purge: false, force: false })).rejects.toThrow(
      'store cannot be deleted because it is still managing secrets',
    );
    const v = await h.service.deleteDestination('provider-a-sm', 'd', { purge: true, force: false });
    expect(v?.purge_initiated_at).toBeTruthy();
    await until(
      () => h.store.getDest('provider-a-sm', 'd'),
      (d) => d === null,
    );
    expect(h.provider('d').store.size).toBe(0);
  });
});
