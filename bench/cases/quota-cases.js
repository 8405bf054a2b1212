/**
 * `encrypt-with-quota` (issue 28): encrypt 64 B over the Unix socket while a rate-limit quota that
 * is never hit governs the transit mount (and others govern other mounts), against the same encrypt
 * with no quota at all, in the same run, repetition by repetition (the quota is written before and
 * deleted after each of its runs). Target: at least 0.97x. The server CPU per request of both sides
 * is reported beside the throughput.
 */
import { randomBytes } from 'node:crypto';
import { apiOk } from '../lib/http.js';
import { runLoad } from '../lib/load.js';
import { cpuSecondsOf } from '../lib/procs.js';
import { median } from '../lib/stats.js';
import { ensureKey, requireFeature } from '../lib/setup.js';
import { api } from '../lib/http.js';

const PT64 = randomBytes(64).toString('base64');
const KEY = 'bench-aes';
const ge = (on, limit) => ({ on, op: '>=', limit });

/** Quotas present during the quota side: one on the measured mount (never hit), two elsewhere. */
const QUOTAS = {
  'bench-transit': { path: 'transit/', rate: 1e9, interval: '1s' },
  'bench-other-path': { path: 'transit/keys/*', rate: 5, interval: '1s' },
  'bench-sys': { path: 'cubbyhole/', rate: 5, interval: '1s' },
};

async function setQuotas(ctx, on) {
  for (const [name, body] of Object.entries(QUOTAS)) {
    if (on) await apiOk(ctx.kh.unix, 'POST', `sys/quotas/rate-limit/${name}`, body, ctx.rootToken);
    else await apiOk(ctx.kh.unix, 'DELETE', `sys/quotas/rate-limit/${name}`, undefined, ctx.rootToken);
  }
}

async function measure(ctx) {
  const spec = {
    target: ctx.kh.unix,
    pid: ctx.kh.pid,
    path: `/v1/transit/encrypt/${KEY}`,
    headers: { 'X-Vault-Token': ctx.token },
    body: { plaintext: PT64 },
  };
  const c0 = cpuSecondsOf(ctx.kh.pid);
  const r = await runLoad({ warmupSec: ctx.cfg.warmupSec, durationSec: ctx.cfg.durationSec, ...spec });
  const c1 = cpuSecondsOf(ctx.kh.pid);
  if (r.ok === 0) throw new Error(`encrypt answered no 2xx: ${JSON.stringify(r.statuses)}`);
  r.cpuUs = c0 !== null && c1 !== null ? ((c1 - c0) * 1e6) / (r.ok + (r.warmupOk ?? 0)) : null;
  return r;
}

export const quotaCases = [
  {
    id: 'encrypt-with-quota',
    unit: 'req/s',
    checks: [ge('ratio', 0.97)],
    describe:
      'encrypt 64 B over the Unix socket, 16 connections, under a rate-limit quota never hit (and quotas on other paths); baseline: the same encrypt with no quota, same run, interleaved',
    async run(ctx) {
      await ensureKey(ctx, KEY, 'aes256-gcm96');
      requireFeature(await api(ctx.kh.unix, 'GET', 'sys/quotas/config', undefined, ctx.rootToken), 'sys/quotas');
      const plain = [];
      const quota = [];
      for (let rep = 0; rep < ctx.cfg.reps; rep++) {
        // Alternate which side runs first, so a drift on the machine hits both alike.
        const order = rep % 2 === 0 ? ['plain', 'quota'] : ['quota', 'plain'];
        for (const side of order) {
          if (side === 'quota') {
            await setQuotas(ctx, true);
            quota.push(await measure(ctx));
            await setQuotas(ctx, false);
          } else plain.push(await measure(ctx));
        }
      }
      const rps = (rs) => median(rs.map((r) => r.rps));
      const cpu = (rs) => median(rs.map((r) => r.cpuUs));
      const bad = [...plain, ...quota].reduce((s, r) => s + r.bad, 0);
      return {
        value: rps(quota),
        baseline: rps(plain),
        detail: {
          cpu_us_per_req: cpu(quota),
          baseline_cpu_us_per_req: cpu(plain),
          reps: quota.map((r) => Math.round(r.rps)),
          baseline_reps: plain.map((r) => Math.round(r.rps)),
          p99_ms: median(quota.map((r) => r.latency.p99)),
          baseline_p99_ms: median(plain.map((r) => r.latency.p99)),
        },
        bad,
      };
    },
  },
];
