/**
 * A link's attempt skips the entries already in place (written-marks.ts): a retry resumes where
 * the last one stopped, a KV change writes only changed keys, and the marks hold no secret. The
 * worker and service against in-memory storage, a fake KV source and a scripted fake connector.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Connector } from '../../../src/sync/destinations/common.js';
import { SyncFailure } from '../../../src/sync/failure.js';
import { SyncService } from '../../../src/sync/service.js';
import { SyncStore } from '../../../src/sync/store.js';
import { DEFAULT_TUNING } from '../../../src/sync/tuning.js';
import { Syncer } from '../../../src/sync/worker.js';
import { valueMac } from '../../../src/sync/written-marks.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import { FakeKv, mount, silent } from './fake-kv-source.js';

/** A provider recording each call; `failures` scripts the outcome of the next calls (null: succeed). */
class Provider {
  readonly store = new Map<string, string>();
  readonly calls: string[] = [];
  failures: Array<SyncFailure | null> = [];
  connector(): Connector {
    const run = async (what: string, fn: () => void) => {
      this.calls.push(what);
      const f = this.failures.shift();
      if (f) throw f;
      fn();
    };
    return {
      put: (name, value) => run(`put ${name}`, () => this.store.set(name, value)),
      remove: (name) => run(`remove ${name}`, () => this.store.delete(name)),
      close() {},
    };
  }
  puts(): string[] {
    return this.calls.filter((c) => c.startsWith('put ')).map((c) => c.slice(4));
  }
}

const open: Syncer[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

function harness(storage = new InmemBackend(), kv = new FakeKv(), provider = new Provider()) {
  const store = new SyncStore(storage);
  const syncer = new Syncer({
    store,
    kv,
    clock: { now: () => Date.now() },
    logger: silent,
    tuning: {
      ...DEFAULT_TUNING,
      backoff: { baseMs: 5, maxMs: 20, maxAttempts: 4 },
      setWaitMs: 2000,
      reconcileMs: 3_600_000,
    },
    connect: () => provider.connector(),
    random: () => 0.5,
  });
  open.push(syncer);
  const service = new SyncService(store, syncer, kv, { now: () => Date.now() }, silent);
  return { storage, kv, store, syncer, service, provider };
}

async function until<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const ID = encodeURIComponent(`${mount.accessor}/s`);
const name = (k: string) => `vault/${mount.accessor}/s/${k}`;
const retryable = () => new SyncFailure('EXTERNAL_SERVICE_ERROR', 'put: HTTP 429 (rate limited)', { retryable: true });
const DATA = { a: 'alpha-1', b: 'bravo-1', c: 'charlie-1', d: 'delta-1', e: 'echo-1' };

/** A secret-key destination `d` with the secret `s` linked; waits for SYNCED. */
async function linked(h: ReturnType<typeof harness>, data: Record<string, string> = DATA) {
  await h.syncer.start();
  h.kv.write('s', data);
  await h.service.writeDestination('provider-a-sm', 'd', { granularity: 'secret-key' }, 'post');
  await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', () => true);
  return synced(h);
}
const synced = (h: ReturnType<typeof harness>) =>
  until(
    () => h.store.getLink('provider-a-sm', 'd', ID),
    (l) => l?.sync_status === 'SYNCED',
  );
async function kvChange(h: ReturnType<typeof harness>, data: Record<string, string>) {
  h.kv.write('s', data);
  const version = h.kv.data.get('s')!.version;
  await h.service.onKvEvent({
    kind: 'data-write',
    mountAccessor: mount.accessor,
    mountPath: 'secret/',
    path: 's',
    version,
    currentVersion: version,
  });
}

describe('a retry resumes where the last attempt stopped', () => {
  it('after a rate limit on the third key, the retry writes the third key onwards only', async () => {
    const h = harness();
    h.provider.failures = [null, null, retryable()];
    await linked(h);
    expect(Object.fromEntries(h.provider.store)).toEqual(
      Object.fromEntries(Object.entries(DATA).map(([k, v]) => [name(k), v])),
    );
    // a, b written once; c refused, then written; d, e once. Restarting would have written a, b again.
    expect(h.provider.puts()).toEqual(['a', 'b', 'c', 'c', 'd', 'e'].map(name));
  });

  it('keeps resuming across a restart: the marks and their key are in storage', async () => {
    const storage = new InmemBackend();
    const provider = new Provider();
    const first = harness(storage, new FakeKv(), provider);
    // Every call after the second is refused: the link stays failed with a and b written.
    provider.failures = [null, null, ...Array.from({ length: 1000 }, retryable)];
    await first.syncer.start();
    first.kv.write('s', DATA);
    await first.service.writeDestination('provider-a-sm', 'd', { granularity: 'secret-key' }, 'post');
    await first.service.setAssociation('provider-a-sm', 'd', 'secret', 's', () => true);
    await until(
      () => first.store.getLink('provider-a-sm', 'd', ID),
      (l) => l?.entries.b?.sync_status === 'SYNCED' && l.sync_status === 'EXTERNAL_SERVICE_ERROR',
    );
    await first.syncer.close();
    provider.failures = [];
    provider.calls.length = 0;
    // A new node on the same storage (restart): the reconciliation at start re-queues the failed link.
    const second = harness(storage, first.kv, provider);
    await second.syncer.start();
    await synced(second);
    expect(provider.puts()).toEqual(['c', 'd', 'e'].map(name));
  });

  it('a KV change writes only the keys whose value changed and deletes removed keys', async () => {
    const h = harness();
    await linked(h);
    h.provider.calls.length = 0;
    const { e: _removed, ...rest } = DATA;
    await kvChange(h, { ...rest, b: 'bravo-2' });
    await synced(h);
    expect(h.provider.calls).toEqual([`put ${name('b')}`, `remove ${name('e')}`]);
    expect(h.provider.store.get(name('b'))).toBe('bravo-2');
    // The same data again (a new version): nothing to send.
    h.provider.calls.length = 0;
    await kvChange(h, { ...rest, b: 'bravo-2' });
    await synced(h);
    expect(h.provider.calls).toEqual([]);
  });

  it('a failed call forgets the mark: the earlier value is written again when it comes back', async () => {
    const h = harness();
    await linked(h, { a: 'one' });
    // The write of "two" fails: keyhold cannot tell what the provider holds now (a timed-out write
    // may have landed), so the mark of "one" must not survive.
    h.provider.failures = [new SyncFailure('CLIENT_SIDE_ERROR', 'put: HTTP 400 rejected')];
    await kvChange(h, { a: 'two' });
    await until(
      () => h.store.getLink('provider-a-sm', 'd', ID),
      (l) => l?.sync_status === 'CLIENT_SIDE_ERROR',
    );
    h.provider.calls.length = 0;
    await kvChange(h, { a: 'one' });
    await synced(h);
    expect(h.provider.puts()).toEqual([name('a')]);
  });

  it('setting the association again, or changing the destination, writes every entry again', async () => {
    const h = harness();
    await linked(h, { a: 'one', b: 'two' });
    h.provider.calls.length = 0;
    await h.service.setAssociation('provider-a-sm', 'd', 'secret', 's', () => true);
    await synced(h);
    expect(h.provider.puts().sort()).toEqual([name('a'), name('b')]);
    h.provider.calls.length = 0;
    await h.service.writeDestination('provider-a-sm', 'd', { custom_tags: { team: 'x' } }, 'post');
    await kvChange(h, { a: 'one', b: 'two' });
    await synced(h);
    expect(h.provider.puts().sort()).toEqual([name('a'), name('b')]);
  });
});

describe('the marks hold no secret', () => {
  it('the stored link has a keyed hash per entry, neither the value nor its plain hash', async () => {
    const h = harness();
    const l = await linked(h);
    const raw = (await h.storage.get(`links/provider-a-sm/d/${ID}`))!.toString('utf8');
    const keyRec = JSON.parse((await h.storage.get('value-mac-key'))!.toString('utf8')) as { key: string };
    const key = Buffer.from(keyRec.key, 'base64');
    expect(key).toHaveLength(32);
    for (const [k, v] of Object.entries(DATA)) {
      expect(raw).not.toContain(v);
      for (const enc of ['hex', 'base64', 'base64url'] as const)
        expect(raw).not.toContain(createHash('sha256').update(v).digest(enc).slice(0, 16));
      const mark = l!.entries[k]!.written!;
      expect(mark.mac).toBe(valueMac(key, `provider-a-sm/d/${ID}`, k, name(k), v));
      expect(mark.generation).toBe(l!.generation);
    }
    // The marks never reach the API's association records.
    const view = JSON.stringify(await h.service.associations('provider-a-sm', 'd'));
    expect(view).not.toContain('written');
    expect(view).not.toContain(l!.entries.a!.written!.mac);
  });

  it('the keyed hash depends on the key, the link, the sub-key, the name and the value', () => {
    const key = Buffer.alloc(32, 1);
    const base = valueMac(key, 'l', 'k', 'n', 'v');
    expect(base).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(valueMac(key, 'l', 'k', 'n', 'v')).toBe(base);
    expect(valueMac(Buffer.alloc(32, 2), 'l', 'k', 'n', 'v')).not.toBe(base);
    expect(valueMac(key, 'l2', 'k', 'n', 'v')).not.toBe(base);
    expect(valueMac(key, 'l', 'k2', 'n', 'v')).not.toBe(base);
    expect(valueMac(key, 'l', 'k', 'n2', 'v')).not.toBe(base);
    expect(valueMac(key, 'l', 'k', 'n', 'v2')).not.toBe(base);
    // Field boundaries count: moving a character from one field to the next changes the hash.
    expect(valueMac(key, 'l', 'k', 'nv', '')).not.toBe(valueMac(key, 'l', 'k', 'n', 'v'));
  });
});
