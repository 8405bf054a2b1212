/**
 * userpass on the real daemon: bcrypt runs on worker threads (src/auth/password-worker.ts), so
 * logins do not hold other requests. Measured on a 2-core machine: 30 logins, health answered at
 * p50 1.0 ms / p99 11.6 ms with the workers; on the event loop (bcryptjs's async API) p50 was 209 ms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;
beforeAll(async () => {
  d = await startDaemon();
  await d.req('POST', 'sys/auth/userpass', { type: 'userpass' });
  await d.req('POST', 'auth/userpass/users/u', { password: 'pw-u' });
  // Wrong passwords below are on purpose: no lockout in this file.
  await d.req('POST', 'sys/auth/userpass/tune', { user_lockout_config: { lockout_disable: true } });
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe('userpass logins and the event loop', () => {
  it('other requests are answered promptly while bcrypt runs (health p50 under 50 ms during logins)', async () => {
    let stop = false;
    const lat: number[] = [];
    const pinger = (async () => {
      while (!stop) {
        const t = performance.now();
        await d.req('GET', 'sys/health');
        lat.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) {
      const [ok, bad] = await Promise.all([
        d.req('POST', 'auth/userpass/login/u', { password: 'pw-u' }, { token: null }),
        d.req('POST', 'auth/userpass/login/u', { password: 'nope' }, { token: null }),
      ]);
      expect(ok.status).toBe(200);
      expect(bad.status).toBe(400);
    }
    const elapsed = performance.now() - t0;
    stop = true;
    await pinger;
    lat.sort((a, b) => a - b);
    const p50 = lat[lat.length >> 1]!;
    console.log(
      `userpass: 20 logins in ${elapsed.toFixed(0)} ms; health p50 ${p50.toFixed(1)} ms, p99 ${lat[Math.floor(lat.length * 0.99)]!.toFixed(1)} ms (${lat.length} requests)`,
    );
    expect(p50).toBeLessThan(50);
  }, 120_000);

  it('an unknown user costs the time of a wrong password on the worker path too (median ratio 0.8-1.25)', async () => {
    const time = async (user: string) => {
      const t = performance.now();
      const r = await d.req('POST', `auth/userpass/login/${user}`, { password: 'not-it' }, { token: null });
      expect(r.status).toBe(400);
      return performance.now() - t;
    };
    await time('warm-up-ghost');
    // Pairs taken back to back, which goes first alternating, and the median of the pairs' ratios:
    // a load swing on a shared CI machine (other test files on the same 2 cores) then hits both
    // sides of a pair alike instead of one side's median (0.76 seen with medians of each side).
    const unknown: number[] = [];
    const wrong: number[] = [];
    const ratios: number[] = [];
    for (let i = 0; i < 30; i++) {
      const [u, w] =
        i % 2 === 0
          ? [await time(`ghost-${i}`), await time('u')]
          : await time('u').then(async (w1) => [await time(`ghost-${i}`), w1] as const);
      unknown.push(u);
      wrong.push(w);
      ratios.push(u / w);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    const ratio = median(ratios);
    console.log(
      `userpass (daemon): unknown ${median(unknown).toFixed(1)} ms, wrong password ${median(wrong).toFixed(1)} ms, median pair ratio ${ratio.toFixed(3)}`,
    );
    expect(ratio).toBeGreaterThan(0.8);
    expect(ratio).toBeLessThan(1.25);
  }, 120_000);
});
