/**
 * encrypt-with-telemetry (issue 27): encrypt throughput of a daemon with a `telemetry` stanza
 * against the same daemon build without one, in the same run. Two fresh daemons on file storage,
 * same key type, same token kind, same load; their runs interleaved repetition by repetition so
 * background load on the shared machine hits both alike. Target: on/off >= 0.95.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, apiOk } from '../lib/http.js';
import { runLoad } from '../lib/load.js';
import { cpuSecondsOf, initAndUnseal, startKeyhold } from '../lib/procs.js';
import { median } from '../lib/stats.js';
import { BENCH_POLICY, requireFeature } from '../lib/setup.js';

const PT64 = randomBytes(64).toString('base64');
const KEY = 'bench-tel';

/** A fresh daemon in `dir` with `serverArgs`, unsealed, transit mounted, a key and a bench-policy token. */
async function daemon(dir, serverArgs) {
  mkdirSync(dir, { recursive: true });
  const kh = await startKeyhold({ dir, socket: join(dir, 'keyhold.sock'), storage: join(dir, 'data'), serverArgs });
  const { rootToken } = await initAndUnseal(kh);
  await apiOk(kh.unix, 'POST', 'sys/mounts/transit', { type: 'transit' }, rootToken);
  await apiOk(kh.unix, 'POST', 'sys/policies/acl/bench', { policy: BENCH_POLICY }, rootToken);
  const tok = await apiOk(kh.unix, 'POST', 'auth/token/create', { policies: ['bench'], ttl: '24h' }, rootToken);
  await apiOk(kh.unix, 'POST', `transit/keys/${KEY}`, { type: 'aes256-gcm96' }, tok.auth.client_token);
  return { kh, token: tok.auth.client_token, rootToken };
}

async function load(ctx, d) {
  const c0 = cpuSecondsOf(d.kh.pid);
  const r = await runLoad({
    target: d.kh.unix,
    path: `/v1/transit/encrypt/${KEY}`,
    headers: { 'X-Vault-Token': d.token },
    body: { plaintext: PT64 },
    warmupSec: ctx.cfg.warmupSec,
    durationSec: ctx.cfg.durationSec,
  });
  const c1 = cpuSecondsOf(d.kh.pid);
  if (r.ok === 0) throw new Error(`no 2xx answers: ${JSON.stringify(r.statuses)}`);
  if (c0 !== null && c1 !== null) r.cpuUsPerReq = ((c1 - c0) * 1e6) / (r.ok + (r.warmupOk ?? 0));
  return r;
}

/** The case. */
export const telemetryCase = {
  id: 'encrypt-with-telemetry',
  unit: 'req/s',
  checks: [{ on: 'ratio', op: '>=', limit: 0.95 }],
  describe:
    'encrypt 64 B, aes256-gcm96, 16 connections, Unix socket, daemon with a telemetry stanza; baseline: the same daemon without one, same run',
  async run(ctx) {
    const cfgFile = join(ctx.dir, 'telemetry.hcl');
    writeFileSync(cfgFile, 'telemetry {\n  prometheus_retention_time = "24h"\n  disable_hostname = true\n}\n');
    const on = await daemon(join(ctx.dir, 'tel-on'), ['--config', cfgFile]);
    const off = await daemon(join(ctx.dir, 'tel-off'), []);
    try {
      const metrics = await api(on.kh.unix, 'GET', 'sys/metrics?format=prometheus', undefined, on.rootToken);
      requireFeature(metrics, 'sys/metrics');
      const runs = { on: [], off: [] };
      for (let rep = 0; rep < ctx.cfg.reps; rep++) {
        // Alternate which side goes first so neither always runs on a warmer machine.
        const order = rep % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
        for (const side of order) runs[side].push(await load(ctx, side === 'on' ? on : off));
      }
      const fig = (rs) => ({
        rps: median(rs.map((r) => r.rps)),
        p99: median(rs.map((r) => r.latency.p99)),
        cpu: median(rs.map((r) => r.cpuUsPerReq ?? NaN)),
        bad: rs.reduce((s, r) => s + r.bad, 0),
        reps: rs.map((r) => Math.round(r.rps)),
      });
      const a = fig(runs.on);
      const b = fig(runs.off);
      // The scrape itself works after the load (the counters moved).
      const after = await api(on.kh.unix, 'GET', 'sys/metrics?format=prometheus', undefined, on.rootToken);
      const counted = /keyhold_transit_operations\{[^}]*operation="encrypt"[^}]*\} (\d+)/.exec(String(after.body))?.[1];
      return {
        value: a.rps,
        baseline: b.rps,
        detail: {
          p99_ms: a.p99,
          baseline_p99_ms: b.p99,
          cpu_us_per_req: a.cpu,
          baseline_cpu_us_per_req: b.cpu,
          reps: a.reps,
          baseline_reps: b.reps,
          encrypts_counted: counted ? Number(counted) : null,
        },
        bad: a.bad + b.bad,
      };
    } finally {
      await on.kh.stop();
      await off.kh.stop();
    }
  },
};
