/** Rate-limit quotas without a daemon: fixed windows, blocking, which quota governs a request, exempt paths, records in storage. */
import { describe, expect, it } from 'vitest';
import { RateLimiter, type RateLimitRecord } from '../../../src/quotas/rate-limit.js';
import { QuotaIndex } from '../../../src/quotas/quota-index.js';
import { QuotaManager } from '../../../src/quotas/quota-manager.js';
import { InmemBackend } from '../../../src/storage/inmem.js';

const rec = (over: Partial<RateLimitRecord>): RateLimitRecord => ({
  name: 'q',
  path: '',
  mount_path: '',
  path_suffix: '',
  role: '',
  rate: 2,
  interval: 1,
  block_interval: 0,
  inheritable: false,
  ...over,
});

describe('RateLimiter', () => {
  it('allows `rate` requests per client per interval and starts over at the next boundary', () => {
    const q = new RateLimiter(rec({ rate: 2, interval: 10 }));
    const t0 = 1_000_000;
    expect(q.take('a', t0).allowed).toBe(true);
    expect(q.take('a', t0 + 1).remaining).toBe(0);
    const v = q.take('a', t0 + 2);
    expect(v.allowed).toBe(false);
    expect(v.reset).toBe(10);
    expect(q.take('b', t0 + 3).allowed).toBe(true); // another client has its own count
    expect(q.take('a', t0 + 10_000).allowed).toBe(true);
  });

  it('blocks a client over the limit for block_interval', () => {
    const q = new RateLimiter(rec({ rate: 1, interval: 1, block_interval: 60 }));
    const t0 = 5_000_000;
    expect(q.take('a', t0).allowed).toBe(true);
    expect(q.take('a', t0 + 10).allowed).toBe(false);
    const later = q.take('a', t0 + 5_000);
    expect(later.allowed).toBe(false);
    expect(later.reset).toBe(56); // blocked at t0+10 for 60 s: 55.01 s left, rounded up
    expect(q.take('a', t0 + 61_000).allowed).toBe(true);
  });
});

describe('QuotaIndex', () => {
  const g = new RateLimiter(rec({ name: 'g' }));
  const mount = new RateLimiter(rec({ name: 'mount', mount_path: 'transit/', path: 'transit/' }));
  const prefix = new RateLimiter(rec({ name: 'prefix', mount_path: 'transit/', path_suffix: 'encrypt/*' }));
  const longer = new RateLimiter(rec({ name: 'longer', mount_path: 'transit/', path_suffix: 'encrypt/a*' }));
  const exact = new RateLimiter(rec({ name: 'exact', mount_path: 'transit/', path_suffix: 'encrypt/ab' }));
  const role = new RateLimiter(rec({ name: 'role', mount_path: 'auth/approle/', role: 'ci' }));
  const idx = new QuotaIndex([g, mount, prefix, longer, exact, role]);

  it('picks role, exact path, longest prefix, mount, then global', () => {
    expect(idx.find('transit/', 'encrypt/ab', undefined)).toBe(exact);
    expect(idx.find('transit/', 'encrypt/abc', undefined)).toBe(longer);
    expect(idx.find('transit/', 'encrypt/x', undefined)).toBe(prefix);
    expect(idx.find('transit/', 'keys/x', undefined)).toBe(mount);
    expect(idx.find('kv/', 'x', undefined)).toBe(g);
    expect(idx.find('auth/approle/', 'login', 'ci')).toBe(role);
    expect(idx.find('auth/approle/', 'login', 'other')).toBe(g);
    expect(idx.hasRoles('auth/approle/')).toBe(true);
    expect(new QuotaIndex([]).empty).toBe(true);
  });
});

describe('QuotaManager', () => {
  it('stores records, refuses a second quota on the same path, never limits exempt paths, reloads what another node wrote', async () => {
    const storage = new InmemBackend();
    let now = 10_000_000;
    const m = new QuotaManager(storage, () => now);
    await m.reload();
    expect(m.empty).toBe(true);
    await m.put(rec({ name: 'global', rate: 1, interval: 60 }));
    await expect(m.put(rec({ name: 'other', rate: 5 }))).rejects.toThrow(
      /similar properties exists under the name "global"/,
    );
    expect(m.check('transit/encrypt/a', 'transit/', 'encrypt/a', 'c', undefined)?.allowed).toBe(true);
    expect(m.check('transit/encrypt/a', 'transit/', 'encrypt/a', 'c', undefined)?.allowed).toBe(false);
    expect(m.check('sys/health', 'sys/', 'health', 'c', undefined)).toBeNull();
    const other = new QuotaManager(storage, () => now);
    await other.reload();
    expect(other.names()).toEqual(['global']);
    await m.setConfig({
      rate_limit_exempt_paths: ['transit/*'],
      enable_rate_limit_audit_logging: false,
      enable_rate_limit_response_headers: true,
    });
    expect(m.check('transit/encrypt/a', 'transit/', 'encrypt/a', 'c', undefined)).toBeNull();
    expect(m.check('sys/health', 'sys/', 'health', 'c', undefined)?.allowed).toBe(false);
    now += 60_000;
    await m.delete('global');
    expect(m.empty).toBe(true);
  });
});
