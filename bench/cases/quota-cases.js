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
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../lib/procs.js';
import { api } from '../lib/http.js';

const PT64 = randomBytes(64).toString('base64');
const KEY = 'bench-aes';
const ge = (on, limit) => ({ on, op: '>=', limit });
const le = (on, limit) => ({ on, op: '<=', limit });

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

/**
 * The quota step itself, in this process on the built code: nanoseconds per request for a request a
 * never-hit quota governs (the case's path) and for one no quota governs (the step's cheapest path).
 * Steadier than two throughputs on a shared machine; compared with the server CPU per request.
 */
async function checkCost() {
  const { QuotaManager } = await import(pathToFileURL(join(ROOT, 'dist', 'quotas', 'quota-manager.js')).href);
  const { InmemBackend } = await import(pathToFileURL(join(ROOT, 'dist', 'storage', 'inmem.js')).href);
  const m = new QuotaManager(new InmemBackend());
  const rec = (name, mount, suffix, rate) => ({
    name,
    path: mount + suffix,
    mount_path: mount,
    path_suffix: suffix,
    role: '',
    rate,
    interval: 1,
    block_interval: 0,
    inheritable: false,
  });
  await m.put(rec('bench-transit', 'transit/', '', 1e9));
  await m.put(rec('bench-other-path', 'transit/', 'keys/*', 5));
  await m.put(rec('bench-sys', 'cubbyhole/', '', 5));
  const time = (path, mount, sub) => {
    const n = 2_000_000;
    for (let i = 0; i < 200_000; i++) m.check(path, mount, sub, '127.0.0.1');
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) m.check(path, mount, sub, '127.0.0.1');
    return Number(process.hrtime.bigint() - t0) / n;
  };
  return {
    governed_ns: time(`transit/encrypt/${KEY}`, 'transit/', `encrypt/${KEY}`),
    ungoverned_ns: time('secret/data/x', 'secret/', 'data/x'),
  };
}

export const quotaCases = [
  {
    id: 'encrypt-with-quota',
    unit: 'req/s',
    checks: [ge('ratio', 0.97), le('quota_share', 0.03)],
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
      const cost = await checkCost();
      // The step's share of a request's server CPU (its median without quotas).
      const share = cost.governed_ns / 1000 / cpu(plain);
      return {
        value: rps(quota),
        baseline: rps(plain),
        figures: { quota_share: share },
        detail: {
          quota_check_ns: cost.governed_ns,
          quota_check_ungoverned_ns: cost.ungoverned_ns,
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
