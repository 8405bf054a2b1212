/**
 * Cases timed around whole processes: the CLI round trip, envelope encryption of a large file, and
 * daemon start-up on a storage holding many keys.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { api, apiOk, pool } from '../lib/http.js';
import { BIN, ROOT, initAndUnseal, runCmd, startKeyhold, unseal, waitAnswer } from '../lib/procs.js';
import { median } from '../lib/stats.js';
import { MissingFeature, ensureKey, isMissing, requireFeature } from '../lib/setup.js';

const AES = 'bench-aes';
const PRELOAD = pathToFileURL(join(ROOT, 'bench', 'lib', 'rss-preload.js')).href;

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

/** Turn a CLI failure into MissingFeature when commander did not know the command or option. */
function cliFailure(r, what) {
  const lines = r.stderr.trim().split('\n');
  const msg = (lines.find((l) => /error/i.test(l)) ?? lines.at(-1) ?? '').trim();
  if (r.code === 1 && /unknown (command|option)|too many arguments|not implemented/i.test(r.stderr))
    return new MissingFeature(`feature missing: ${what} (${msg})`);
  return new Error(`${what} exited ${r.code}: ${msg}`);
}

const le = (on, limit) => ({ on, op: '<=', limit });
const ge = (on, limit) => ({ on, op: '>=', limit });

/** Write `bytes` of random data to `path` in 16 MiB chunks (constant memory). */
function randomFile(path, bytes) {
  const fd = openSync(path, 'w');
  const chunk = 16 << 20;
  try {
    for (let done = 0; done < bytes; done += chunk) writeSync(fd, randomBytes(Math.min(chunk, bytes - done)));
  } finally {
    closeSync(fd);
  }
}

/** Fill a fresh storage with `n` transit keys, then stop its daemon; returns what restarts need. */
async function populate(ctx, name, n) {
  const dir = join(ctx.dir, name);
  mkdirSync(dir, { recursive: true });
  const spec = { dir, socket: join(dir, 'keyhold.sock'), storage: join(dir, 'data') };
  const d = await startKeyhold(spec);
  const t0 = performance.now();
  try {
    const { recoveryKey, rootToken } = await initAndUnseal(d);
    await apiOk(d.unix, 'POST', 'sys/mounts/transit', { type: 'transit' }, rootToken);
    const first = await api(d.unix, 'POST', 'transit/keys/bk-0', { type: 'aes256-gcm96' }, rootToken);
    if (first.status === 404 || first.status === 405)
      throw new MissingFeature(`feature missing: transit key creation (${first.status})`);
    await pool(n - 1, 16, (i) =>
      apiOk(d.unix, 'POST', `transit/keys/bk-${i + 1}`, { type: 'aes256-gcm96' }, rootToken),
    );
    return { spec, recoveryKey, rootToken, populateSec: (performance.now() - t0) / 1000 };
  } finally {
    await d.stop();
  }
}

/** Spawn the daemon on a populated storage; ms from spawn to the first successful encrypt. */
async function timeToFirstAnswer(p) {
  const d = await startKeyhold({ ...p.spec, waitReady: false });
  try {
    await waitAnswer(d, 2);
    await unseal(d, p.recoveryKey);
    for (let i = 0; i < 5000; i++) {
      const r = await api(d.unix, 'POST', 'transit/encrypt/bk-0', { plaintext: 'aGVsbG8=' }, p.rootToken);
      if (r.status === 200) return performance.now() - d.startedAt;
      if (isMissing(r)) requireFeature(r, 'transit encrypt');
      if (r.status !== 503)
        throw new Error(`first encrypt after start: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    }
    throw new Error('daemon never answered an encrypt');
  } finally {
    await d.stop();
  }
}

/** Process-level cases in the order of the issue. */
export const processCases = [
  {
    id: 'cli-encrypt',
    unit: 'ms',
    checks: [le('ratio', 1.1)],
    describe:
      '`printf x | keyhold transit encrypt bench-aes --field ciphertext`, a new process per call, wall time of the round trip (median); baseline: `node -e 0`, interleaved. Figures: `keyhold --version` and `keyhold status` against the same baseline',
    async run(ctx) {
      await ensureKey(ctx, AES, 'aes256-gcm96');
      const env = cliEnv(ctx);
      const input = Buffer.from('x');
      const args = [BIN, 'transit', 'encrypt', AES, '--field', 'ciphertext'];
      const first = await runCmd(process.execPath, args, { input, env });
      if (first.code !== 0) throw cliFailure(first, 'keyhold transit encrypt');
      if (!first.stdout.toString().startsWith('vault:v1:'))
        throw new Error(`keyhold transit encrypt printed no ciphertext: ${first.stdout.toString().slice(0, 200)}`);
      const version = [BIN, '--version'];
      const status = [BIN, 'status'];
      for (const a of [version, status]) {
        const r = await runCmd(process.execPath, a, { env });
        if (r.code !== 0) throw cliFailure(r, `keyhold ${a.slice(1).join(' ')}`);
      }
      // Warm the page cache (and Node 22+'s compile cache) for every command before timing.
      for (let i = 0; i < 2; i++) {
        await runCmd(process.execPath, ['-e', '0']);
        await runCmd(process.execPath, args, { input, env });
        await runCmd(process.execPath, version, { env });
        await runCmd(process.execPath, status, { env });
      }
      const base = [];
      const cli = [];
      const ver = [];
      const st = [];
      for (let i = 0; i < ctx.cfg.cliRuns; i++) {
        base.push((await runCmd(process.execPath, ['-e', '0'])).ms);
        const r = await runCmd(process.execPath, args, { input, env });
        if (r.code !== 0) throw cliFailure(r, 'keyhold transit encrypt');
        cli.push(r.ms);
        ver.push((await runCmd(process.execPath, version, { env })).ms);
        st.push((await runCmd(process.execPath, status, { env })).ms);
      }
      const b = median(base);
      const figures = { version_ratio: median(ver) / b, status_ratio: median(st) / b };
      return {
        value: median(cli),
        baseline: b,
        figures,
        detail: {
          runs: ctx.cfg.cliRuns,
          min_ms: Math.min(...cli),
          baseline_min_ms: Math.min(...base),
          version_ms: median(ver),
          status_ms: median(st),
        },
      };
    },
  },
  {
    id: 'envelope-1gib',
    unit: 'MiB/s',
    checks: [ge('ratio', 0.5), le('peak_rss_mb', 150)],
    describe:
      '`keyhold transit encrypt bench-aes --envelope --file IN --output OUT` of a 1 GiB random file (quick: 256 MiB), throughput and peak RSS of the CLI; baseline: `openssl enc -aes-256-ctr` of the same file',
    async run(ctx) {
      await ensureKey(ctx, AES, 'aes256-gcm96');
      const bytes = ctx.cfg.envelopeBytes;
      const file = join(ctx.dir, 'envelope.in');
      const out = join(ctx.dir, 'envelope.out');
      const rssFile = join(ctx.dir, 'envelope.rss');
      randomFile(file, bytes);
      const env = cliEnv(ctx, { BENCH_RSS_OUT: rssFile });
      const mib = bytes / 2 ** 20;
      const ours = [];
      const theirs = [];
      const rss = [];
      try {
        for (let rep = 0; rep < ctx.cfg.reps; rep++) {
          const o = await runCmd('openssl', [
            'enc',
            '-aes-256-ctr',
            '-K',
            randomBytes(32).toString('hex'),
            '-iv',
            randomBytes(16).toString('hex'),
            '-in',
            file,
            '-out',
            out,
          ]);
          if (o.code !== 0) throw new Error(`openssl failed: ${o.stderr.slice(-200)}`);
          theirs.push(mib / (o.ms / 1000));
          rmSync(out, { force: true });
          const k = await runCmd(
            process.execPath,
            ['--import', PRELOAD, BIN, 'transit', 'encrypt', AES, '--envelope', '--file', file, '--output', out],
            { env },
          );
          if (k.code !== 0) throw cliFailure(k, 'keyhold transit encrypt --envelope');
          const size = statSync(out).size;
          if (size < bytes) throw new Error(`envelope output is ${size} bytes, shorter than the ${bytes}-byte input`);
          ours.push(mib / (k.ms / 1000));
          rss.push(Number(readFileSync(rssFile, 'utf8')) / 1024);
          rmSync(out, { force: true });
        }
      } finally {
        rmSync(file, { force: true });
        rmSync(out, { force: true });
      }
      const peak = Math.max(...rss);
      const note = ctx.cfg.quick ? `${mib} MiB file (quick)` : undefined;
      return {
        value: median(ours),
        baseline: median(theirs),
        figures: { peak_rss_mb: peak },
        detail: { file_mib: mib, peak_rss_mb: peak, reps: ours, baseline_reps: theirs },
        note,
      };
    },
  },
  {
    id: 'start-10000-keys',
    unit: 'ms',
    checks: [le('value', 2000)],
    describe:
      'daemon start on file storage holding 10,000 transit keys (quick: 1,000): spawn -> health answers -> unseal -> first encrypt 200, wall ms (median); baseline: the same on a storage with 1 key; target is absolute (<= 2 s)',
    async run(ctx) {
      const n = ctx.cfg.startKeys;
      await ensureKey(ctx, AES, 'aes256-gcm96');
      requireFeature(
        await api(ctx.kh.unix, 'POST', `transit/encrypt/${AES}`, { plaintext: 'aGVsbG8=' }, ctx.token),
        'transit encrypt',
      );
      const many = await populate(ctx, 'start-many', n);
      const one = await populate(ctx, 'start-one', 1);
      const a = [];
      const b = [];
      for (let rep = 0; rep < ctx.cfg.reps; rep++) {
        b.push(await timeToFirstAnswer(one));
        a.push(await timeToFirstAnswer(many));
      }
      for (const p of [many, one])
        rmSync(join(ctx.dir, p === many ? 'start-many' : 'start-one'), { recursive: true, force: true });
      const note = ctx.cfg.quick ? `${n} keys (quick)` : undefined;
      return {
        value: median(a),
        baseline: median(b),
        detail: { keys: n, populate_s: many.populateSec, reps: a, baseline_reps: b },
        note,
      };
    },
  },
];
