/**
 * Issue 17 cases: `run-startup` (keyhold run with 20 references against one `keyhold kv get`, whole
 * processes) and `jwt-sign-es256` (JWTs signed by the daemon against `jose` signing in one process).
 */
import { join } from 'node:path';
import { api, apiOk } from '../lib/http.js';
import { runLoad } from '../lib/load.js';
import { BIN, ROOT, runCmd } from '../lib/procs.js';
import { median } from '../lib/stats.js';
import { ensureKey, requireFeature } from '../lib/setup.js';

const ge = (on, limit) => ({ on, op: '>=', limit });
const le = (on, limit) => ({ on, op: '<=', limit });
const JOSE = join(ROOT, 'bench', 'baselines', 'jose-sign.js');
const REFS = 20;
/** JWTs per jwt/sign request and connections, as the sign-* cases batch (bench/cases/http-cases.js). */
const BATCH = 100;
const BATCH_CONNECTIONS = 4;

/** Environment of a CLI child: the daemon's socket and the bench token, nothing from the user's home. */
function cliEnv(ctx, extra = {}) {
  return {
    ...process.env,
    KEYHOLD_HOME: join(ctx.dir, 'cli-home'),
    KEYHOLD_ADDR: `unix://${ctx.kh.socket}`,
    KEYHOLD_TOKEN: ctx.token,
    NO_COLOR: '1',
    ...extra,
  };
}

/** Cases of this file. */
export const secretsCases = [
  {
    id: 'run-startup',
    unit: 'ms',
    checks: [le('ratio', 1.5)],
    describe: `\`keyhold run -- true\` with ${REFS} keyhold:// references (10 secrets x 2 fields, KV v2) in the environment, wall ms per process (median); baseline: \`keyhold kv get --field password secret/bench/run-0\``,
    async run(ctx) {
      const mounts = await api(ctx.kh.unix, 'GET', 'sys/mounts', undefined, ctx.rootToken);
      if (!mounts.body?.data?.['secret/'] && !mounts.body?.['secret/'])
        await apiOk(ctx.kh.unix, 'POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, ctx.rootToken);
      for (let i = 0; i < REFS / 2; i++)
        await apiOk(
          ctx.kh.unix,
          'POST',
          `secret/data/bench/run-${i}`,
          { data: { user: `u${i}`, password: `p${i}-${'x'.repeat(24)}` } },
          ctx.token,
        );
      const refs = {};
      for (let i = 0; i < REFS; i++)
        refs[`REF_${i}`] = `keyhold://secret/bench/run-${i >> 1}#${i % 2 ? 'password' : 'user'}`;
      const runArgs = [BIN, 'run', '--', 'true'];
      const getArgs = [BIN, 'kv', 'get', '--field', 'password', 'secret/bench/run-0'];
      const runEnv = cliEnv(ctx, refs);
      const getEnv = cliEnv(ctx);
      const first = await runCmd(process.execPath, runArgs, { env: runEnv });
      if (first.code !== 0) throw new Error(`keyhold run exited ${first.code}: ${first.stderr.slice(-300)}`);
      const g = await runCmd(process.execPath, getArgs, { env: getEnv });
      if (g.code !== 0) throw new Error(`keyhold kv get exited ${g.code}: ${g.stderr.slice(-300)}`);
      const ours = [];
      const base = [];
      // Interleaved, so background load hits both alike.
      for (let i = 0; i < ctx.cfg.cliRuns; i++) {
        base.push((await runCmd(process.execPath, getArgs, { env: getEnv })).ms);
        const r = await runCmd(process.execPath, runArgs, { env: runEnv });
        if (r.code !== 0) throw new Error(`keyhold run exited ${r.code}`);
        ours.push(r.ms);
      }
      return {
        value: median(ours),
        baseline: median(base),
        detail: {
          references: REFS,
          runs: ctx.cfg.cliRuns,
          min_ms: Math.min(...ours),
          baseline_min_ms: Math.min(...base),
        },
      };
    },
  },
  {
    id: 'jwt-sign-es256',
    unit: 'JWTs/s',
    checks: [ge('ratio', 0.7)],
    describe: `POST transit/jwt/sign/bench-es256 (ecdsa-p256, claims {sub}, 1 h ttl) over the Unix socket with batch_input of ${BATCH} JWTs per request, ${BATCH_CONNECTIONS} connections (as the sign-* cases); baseline: jose SignJWT ES256 in one process with 16 signatures in flight; single-JWT requests (16 connections) in detail`,
    async run(ctx) {
      const name = 'bench-es256';
      await ensureKey(ctx, name, 'ecdsa-p256');
      const body = { claims: { sub: 'bench' } };
      const batch = { batch_input: Array.from({ length: BATCH }, () => body) };
      requireFeature(await api(ctx.kh.unix, 'POST', `transit/jwt/sign/${name}`, body, ctx.token), 'transit jwt/sign');
      const probe = requireFeature(
        await api(ctx.kh.unix, 'POST', `transit/jwt/sign/${name}`, batch, ctx.token),
        'transit jwt/sign batch_input',
      );
      if (probe?.data?.batch_results?.length !== BATCH || probe.data.batch_results.some((r) => !r.token))
        throw new Error('jwt/sign batch_input: no tokens');
      const ours = [];
      const base = [];
      for (let rep = 0; rep < ctx.cfg.reps; rep++) {
        const j = await runCmd(process.execPath, [JOSE, String(ctx.cfg.durationSec), String(ctx.cfg.warmupSec), '16']);
        if (j.code !== 0) throw new Error(`jose baseline failed: ${j.stderr.slice(-300)}`);
        base.push(JSON.parse(j.stdout.toString('utf8')).opsPerSec);
        const r = await runLoad({
          target: ctx.kh.unix,
          path: `/v1/transit/jwt/sign/${name}`,
          headers: { 'X-Vault-Token': ctx.token },
          body: batch,
          connections: BATCH_CONNECTIONS,
          warmupSec: ctx.cfg.warmupSec,
          durationSec: ctx.cfg.durationSec,
        });
        if (r.ok === 0) throw new Error(`jwt/sign answered no 2xx: ${JSON.stringify(r.statuses)}`);
        ours.push(r.rps * BATCH);
      }
      const single = await runLoad({
        target: ctx.kh.unix,
        path: `/v1/transit/jwt/sign/${name}`,
        headers: { 'X-Vault-Token': ctx.token },
        body,
        warmupSec: ctx.cfg.warmupSec,
        durationSec: ctx.cfg.durationSec,
      });
      return {
        value: median(ours),
        baseline: median(base),
        detail: {
          batch: BATCH,
          reps: ours,
          baseline_reps: base,
          single_jwt_requests_per_s: single.rps,
          single_ratio: single.rps / median(base),
          single_p99_ms: single.latency.p99,
        },
      };
    },
  },
];
