/**
 * The token store's lifecycle (issue 33) in process: the TTL rules against Vault's CalculateTTL
 * cases, the expiry queue, single use under interleaving, and a property test that runs random
 * interleavings of use, renew, revoke, unwrap and expiry against a model of what must hold.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TokenStore, type TokenEntry } from '../../../src/auth/tokens.js';
import { ExpiryQueue } from '../../../src/auth/token-expiry.js';
import { SYSTEM_MAX_TTL, tokenLifetime, type LifetimeRequest } from '../../../src/auth/token-ttl.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import { Barrier } from '../../../src/storage/barrier.js';
import { prefixed, type Storage } from '../../../src/storage/backend.js';

const base: LifetimeRequest = {
  ttl: 0,
  period: 0,
  explicitMaxTtl: 0,
  roleMaxTtl: 0,
  mountDefaultTtl: 0,
  mountMaxTtl: 0,
  rootPolicy: false,
};

describe('tokenLifetime (Vault CalculateTTL cases)', () => {
  it('ttl 0 is the mount default; the system default is 768h', () => {
    expect(tokenLifetime(base)).toMatchObject({ ttl: SYSTEM_MAX_TTL, maxTtl: SYSTEM_MAX_TTL, warnings: [] });
    expect(tokenLifetime({ ...base, mountDefaultTtl: 3600 }).ttl).toBe(3600);
    // A default above the mount max is the max.
    expect(tokenLifetime({ ...base, mountDefaultTtl: 7200, mountMaxTtl: 3600 }).ttl).toBe(3600);
  });

  it('a longer ttl is capped at the smallest of mount max, role max and explicit max, with a warning', () => {
    const r = tokenLifetime({ ...base, ttl: 360_000_000 });
    expect(r.ttl).toBe(SYSTEM_MAX_TTL);
    expect(r.warnings[0]).toBe(
      'TTL of "100000h" exceeded the effective max_ttl of "768h"; TTL value is capped accordingly',
    );
    expect(tokenLifetime({ ...base, ttl: 7200, roleMaxTtl: 3600 }).ttl).toBe(3600);
    expect(tokenLifetime({ ...base, ttl: 7200, roleMaxTtl: 5000, explicitMaxTtl: 600 }).ttl).toBe(600);
    expect(tokenLifetime({ ...base, ttl: 7200, mountMaxTtl: 1800 })).toMatchObject({ ttl: 1800, maxTtl: 1800 });
  });

  it('a period is capped by the effective max, and a periodic token has no renewal bound', () => {
    expect(tokenLifetime({ ...base, period: 60 })).toEqual({ ttl: 60, period: 60, maxTtl: 0, warnings: [] });
    const capped = tokenLifetime({ ...base, period: 7200, explicitMaxTtl: 3600 });
    expect(capped).toMatchObject({ ttl: 3600, period: 3600 });
    expect(capped.warnings[0]).toMatch(/^period of "2h" exceeded the effective max_ttl of "1h"/);
  });

  it('only a root-policy token without a ttl never expires, and an explicit max still bounds it', () => {
    expect(tokenLifetime({ ...base, rootPolicy: true }).ttl).toBe(0);
    expect(tokenLifetime({ ...base, rootPolicy: true, explicitMaxTtl: 900 }).ttl).toBe(900);
    expect(tokenLifetime({ ...base, rootPolicy: true, ttl: 360_000_000 }).ttl).toBe(SYSTEM_MAX_TTL);
  });
});

describe('ExpiryQueue', () => {
  it('runs due tokens in time order, skips renewed and unscheduled ones, and does nothing inactive', async () => {
    let now = 1000;
    const seen: string[] = [];
    const q = new ExpiryQueue(
      { now: () => now },
      async (h) => void seen.push(h),
      (e) => {
        throw e;
      },
    );
    q.schedule('ignored', 2000);
    expect(q.size).toBe(0);
    q.activate();
    q.schedule('c', 3000);
    q.schedule('a', 1500);
    q.schedule('b', 2000);
    q.schedule('renewed', 1200);
    q.schedule('renewed', 9000);
    q.schedule('gone', 1100);
    q.unschedule('gone');
    now = 2500;
    await q.runDue();
    expect(seen).toEqual(['a', 'b']);
    now = 10_000;
    await q.runDue();
    expect(seen).toEqual(['a', 'b', 'c', 'renewed']);
    q.deactivate();
    expect(q.size).toBe(0);
  });

  it('fires on its own timer', async () => {
    const seen: string[] = [];
    const q = new ExpiryQueue(
      { now: () => Date.now() },
      async (h) => void seen.push(h),
      () => {},
    );
    q.activate();
    q.schedule('soon', Date.now() + 30);
    for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual(['soon']);
    q.deactivate();
  });
});

async function setup(storageWrap: (s: Storage) => Storage = (s) => s) {
  const barrier = new Barrier(new InmemBackend());
  barrier.unseal(Buffer.alloc(32, 9));
  let now = 1_700_000_000_000;
  const clock = { now: () => now };
  const storage = storageWrap(prefixed(barrier, 'sys/token/'));
  const store = new TokenStore(storage, clock);
  await store.init();
  return { store, storage, clock, advance: (ms: number) => (now += ms) };
}

describe('token store lifecycle', () => {
  it('spends each use once among 20 simultaneous spenders on a cold cache', async () => {
    const { store, storage, clock } = await setup();
    for (const uses of [1, 3]) {
      const { id } = await store.create({ policies: ['p'], ttl: 3600, num_uses: uses });
      const cold = new TokenStore(storage, clock); // a restart: nothing cached
      await cold.init();
      const entries = await Promise.all(Array.from({ length: 20 }, () => cold.lookup(id)));
      const results = await Promise.all(entries.map((e) => cold.spendUse(e!)));
      expect(results.filter((r) => r !== 'gone')).toHaveLength(uses);
      expect(results.filter((r) => r === 'last')).toHaveLength(1);
    }
  });

  it('lets exactly one of 20 simultaneous consumers take a single-use token', async () => {
    const { store } = await setup();
    const { id, entry } = await store.create({ policies: ['response-wrapping'], ttl: 60, num_uses: 1 });
    let ran = 0;
    const taken = await Promise.all(Array.from({ length: 20 }, () => store.consume(entry, async () => ++ran)));
    expect(taken.filter((t) => t !== null)).toHaveLength(1);
    expect(ran).toBe(1);
    expect(await store.lookup(id, { includeSpent: true })).toBeNull();
  });

  it('never renews an expired token back to life (by accessor)', async () => {
    const { store, advance } = await setup();
    const { id, entry } = await store.create({ policies: ['p'], ttl: 2 });
    advance(2500);
    expect(await store.renew(entry, 3600)).toBeNull();
    expect(await store.lookupAccessor(entry.accessor)).toBeNull();
    expect(await store.lookup(id)).toBeNull();
  });

  it('expiry revokes a parent and its cached children when due', async () => {
    const { store, advance } = await setup();
    await store.startExpiry();
    const parent = await store.create({ policies: ['p'], ttl: 3 });
    const child = await store.create({ policies: ['p'], ttl: 3600, parent_accessor: parent.entry.accessor });
    expect(await store.lookup(child.id)).not.toBeNull();
    advance(3500);
    await store.expiry.runDue();
    expect(store.cachedEntry(child.id)).toBeUndefined();
    expect(await store.lookupAccessor(child.entry.accessor)).toBeNull();
    store.stopExpiry();
  });

  it('refuses any other spelling of a batch token', async () => {
    const { store } = await setup();
    const { id } = await store.create({ policies: ['p'], ttl: 60, type: 'batch' });
    expect(await store.lookup(id)).not.toBeNull();
    for (const extra of ['A', 'Q', 'w', '-']) expect(await store.lookup(id + extra)).toBeNull();
  });
});

/**
 * Random interleavings: a parent with children, each with a use limit, and a crowd of operations
 * (spend a use, renew, revoke, consume, advance the clock and run expiry) whose storage calls the
 * fast-check scheduler interleaves in random orders. Afterwards: no token served more uses than it
 * had, at most one consume succeeded per token, nothing revoked or expired came back, and a child
 * outlived neither its parent's revocation nor its expiry.
 */
describe('property: lifecycle under random interleavings', () => {
  it('holds for every schedule', async () => {
    type Op = { kind: 'use' | 'renew' | 'revoke' | 'consume'; who: number } | { kind: 'tick'; ms: number };
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        kind: fc.constantFrom('use' as const, 'renew' as const, 'revoke' as const, 'consume' as const),
        who: fc.integer({ min: 0, max: 3 }),
      }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 4000 }) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(opArb, { minLength: 4, maxLength: 24 }),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 4, maxLength: 4 }),
        async (s, ops, uses) => {
          let scheduling = false;
          const wrap = (inner: Storage): Storage => {
            const sched = <T>(p: Promise<T>): Promise<T> => (scheduling ? s.schedule(p) : p);
            return {
              get: (k) => sched(inner.get(k)),
              put: (k, v) => sched(inner.put(k, v)),
              delete: (k) => sched(inner.delete(k)),
              list: (p) => sched(inner.list(p)),
            } as Storage;
          };
          const { store, advance, clock } = await setup(wrap);
          await store.startExpiry();
          // Token 0 is the parent (3s); 1-3 are its children (1h); each has its own use limit.
          const made: Array<{ id: string; entry: TokenEntry; uses: number }> = [];
          const p = await store.create({ policies: ['p'], ttl: 3, num_uses: uses[0] });
          made.push({ ...p, uses: uses[0]! });
          for (let i = 1; i < 4; i++)
            made.push({
              ...(await store.create({
                policies: ['p'],
                ttl: 3600,
                num_uses: uses[i],
                parent_accessor: p.entry.accessor,
              })),
              uses: uses[i]!,
            });
          const served = [0, 0, 0, 0];
          const consumed = [0, 0, 0, 0];
          const revokedAt: Array<number | null> = [null, null, null, null];
          let parentExpiresAt = made[0]!.entry.expire_time * 1000;
          const parentEndedAt = () => Math.min(revokedAt[0] ?? Infinity, parentExpiresAt);
          scheduling = true;
          const running = ops.map(async (op) => {
            if (op.kind === 'tick') {
              advance(op.ms);
              await store.expiry.runDue();
              return;
            }
            const t = made[op.who]!;
            const e = await store.lookup(t.id);
            if (!e) return;
            if (op.kind === 'use') {
              const r = await store.spendUse(e);
              if (r !== 'gone') served[op.who]!++;
              if (r === 'last') await store.revokeEntry(e);
            } else if (op.kind === 'renew') {
              const r = await store.renew(e, 60);
              if (r && op.who === 0) parentExpiresAt = Math.max(parentExpiresAt, r.expire_time * 1000);
            } else if (op.kind === 'revoke') {
              revokedAt[op.who] ??= clock.now();
              await store.revokeEntry(e);
            } else if ((await store.consume(e, async () => true)) !== null) consumed[op.who]!++;
          });
          await s.waitFor(Promise.all(running));
          scheduling = false;
          for (let i = 0; i < 4; i++) {
            // Uses: never more than the limit; a consume takes the token, so at most one.
            expect(served[i]! + consumed[i]!).toBeLessThanOrEqual(made[i]!.uses);
            expect(consumed[i]!).toBeLessThanOrEqual(1);
          }
          // After everything settled: a revoked token, and every child of a revoked or expired parent, is gone.
          await store.expiry.runDue();
          const parentGone = parentEndedAt() <= clock.now();
          for (let i = 0; i < 4; i++) {
            const live = await store.lookup(made[i]!.id);
            if (revokedAt[i] !== null || consumed[i]! > 0 || served[i] === made[i]!.uses)
              expect(live, `token ${i}`).toBeNull();
            if (i > 0 && parentGone) expect(live, `child ${i} of an ended parent`).toBeNull();
          }
          store.stopExpiry();
        },
      ),
      { numRuns: 150 },
    );
  });
});
