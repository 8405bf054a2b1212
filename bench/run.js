#!/usr/bin/env node
/**
 * `npm run bench` (after `npm run build`): keyhold against the limits of this machine, side by side
 * in one run. Starts the real daemon (file storage, production mode, token auth) and the baselines,
 * runs every case of issue 7, prints one table with ratios and the published anchors, and writes
 * bench/results/latest.json.
 *
 * Flags: --quick (every case briefly, < 5 min), --only id,id (development: run some cases, write
 * nothing unless --out), --out FILE, --profile (daemon under `node --cpu-prof`, profiles in
 * bench/results/profiles/), --keep (keep the temporary directory).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpCases } from './cases/http-cases.js';
import { processCases } from './cases/process-cases.js';
import { rssCases } from './cases/rss-cases.js';
import { securityCases } from './cases/security-cases.js';
import { secretsCases } from './cases/secrets-cases.js';
import { managedKeyCases } from './cases/managed-key-cases.js';
import { syncCase } from './cases/sync-case.js';
import { pgCases } from './cases/pg-cases.js';
import { loginCases } from './cases/login-cases.js';
import { binaryCases } from './cases/binary-cases.js';
import { quotaCases } from './cases/quota-cases.js';
import { telemetryCase } from './cases/telemetry-case.js';
import { machineInfo } from './lib/machine.js';
import { ROOT, freePort, killAll, startBare } from './lib/procs.js';
import { printReport, writeResult } from './lib/report.js';
import { MissingFeature, setupKeyhold } from './lib/setup.js';
import { describeTarget, judge, ratioOf, round } from './lib/stats.js';

/** Case ids in the order of the issue (the order of the table and of the JSON). */
export const CASE_IDS = [
  'encrypt-socket',
  'encrypt-tcp',
  'decrypt',
  'hmac',
  'sign-ed25519',
  'sign-ecdsa-p256',
  'sign-rsa-2048',
  'sign-ml-dsa-65',
  'verify-ml-dsa-65',
  'batch-encrypt-1000',
  'datakey-wrapped',
  'cli-encrypt',
  'envelope-1gib',
  'versions-10000',
  'start-10000-keys',
  'sync-1000',
  'rss-idle',
  'rss-batch-10000',
  'rewrap-pkcs1-timing',
  'run-startup',
  'jwt-sign-es256',
  'login-approle',
  'login-jwt',
  'managed-sign-rsa-2048',
  'managed-encrypt-aes-gcm',
  'pg-encrypt-standby',
  'pg-kv-put',
  'pg-failover',
  'pg-start-100000',
  'cli-encrypt-binary',
  'encrypt-with-telemetry',
  'encrypt-with-quota',
];

/** Settings of a full and of a quick run. */
export const CONFIGS = {
  full: {
    warmupSec: 2,
    durationSec: 5,
    reps: 3,
    envelopeBytes: 2 ** 30,
    startKeys: 10_000,
    versions: 10_000,
    syncCount: 1000,
    cliRuns: 20,
    batchRssRequests: 3,
    rotateBudgetMs: 15 * 60_000,
    syncTimeoutMs: 10 * 60_000,
  },
  quick: {
    warmupSec: 0.3,
    durationSec: 1,
    reps: 3,
    envelopeBytes: 256 * 2 ** 20,
    startKeys: 1000,
    versions: 1000,
    syncCount: 100,
    cliRuns: 5,
    batchRssRequests: 2,
    rotateBudgetMs: 60_000,
    syncTimeoutMs: 120_000,
  },
};

function parseArgs(argv) {
  const a = { quick: false, only: null, out: null, profile: false, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--quick') a.quick = true;
    else if (k === '--profile') a.profile = true;
    else if (k === '--keep') a.keep = true;
    else if (k === '--only') a.only = new Set(argv[++i].split(','));
    else if (k.startsWith('--only=')) a.only = new Set(k.slice(7).split(','));
    else if (k === '--out') a.out = argv[++i];
    else if (k.startsWith('--out=')) a.out = k.slice(6);
    else throw new Error(`unknown flag ${k} (flags: --quick --only ids --out file --profile --keep)`);
  }
  if (a.only)
    for (const id of a.only)
      if (!CASE_IDS.includes(id)) throw new Error(`unknown case ${id}; cases: ${CASE_IDS.join(', ')}`);
  return a;
}

const log = (msg) => process.stderr.write(msg + '\n');

// The AWS SDK (sync baseline) warns that it will need Node 22; that is not news for a benchmark table.
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (!/NodeVersionSupportWarning/.test(`${w.name} ${w.message}`)) log(`(warning) ${w.name}: ${w.message}`);
});

/** Run one case; never throws: a failure becomes pass=false with a note. */
async function runCase(c, ctx) {
  const t0 = performance.now();
  const base = { id: c.id, unit: c.unit, target: describeTarget(c.checks) };
  try {
    if (ctx.kh.proc.exitCode !== null)
      throw new Error(`daemon is not running (exit ${ctx.kh.proc.exitCode}): ${ctx.kh.output().slice(-300)}`);
    const r = await c.run(ctx);
    const ratio = r.baseline === null ? null : ratioOf(r.value, r.baseline);
    const { pass, failed } = judge(c.checks, { value: r.value, ratio, ...r.figures });
    const notes = [
      r.note,
      r.bad ? `${r.bad} non-2xx answers during load` : undefined,
      failed.length ? `missed: ${failed.join(', ')}` : undefined,
    ].filter(Boolean);
    return {
      ...base,
      value: round(r.value),
      baseline: round(r.baseline),
      ratio: round(ratio, 3),
      pass,
      note: notes.join('; ') || undefined,
      description: c.describe,
      seconds: round((performance.now() - t0) / 1000, 3),
      detail: roundAll(r.detail),
    };
  } catch (e) {
    const note = e instanceof MissingFeature ? e.message : `error: ${e.message}`;
    return {
      ...base,
      value: null,
      baseline: null,
      ratio: null,
      pass: false,
      note,
      description: c.describe,
      seconds: round((performance.now() - t0) / 1000, 3),
    };
  }
}

function roundAll(o) {
  if (o === null || typeof o !== 'object') return typeof o === 'number' ? round(o) : o;
  if (Array.isArray(o)) return o.map(roundAll);
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, roundAll(v)]));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!existsSync(join(ROOT, 'dist', 'main.js')))
    throw new Error('dist/ is missing: run `npm run build` first (npm run bench does)');
  const mode = args.quick ? 'quick' : 'full';
  const cfg = { ...CONFIGS[mode], quick: args.quick };
  const machine = machineInfo();
  const dir = mkdtempSync(join(tmpdir(), 'keyhold-bench-'));
  log(`keyhold bench (${mode}) in ${dir}`);
  const nodeArgs = [];
  if (args.profile) {
    const pdir = join(ROOT, 'bench', 'results', 'profiles');
    mkdirSync(pdir, { recursive: true });
    nodeArgs.push('--cpu-prof', '--cpu-prof-dir', pdir);
  }
  const all = [
    ...rssCases,
    ...httpCases,
    ...processCases,
    syncCase,
    ...securityCases,
    ...secretsCases,
    ...loginCases,
    ...managedKeyCases,
    ...pgCases,
    ...binaryCases,
    ...quotaCases,
    telemetryCase,
  ];
  const selected = all.filter((c) => !args.only || args.only.has(c.id));
  const results = new Map();
  let ctx;
  try {
    ctx = { ...(await setupKeyhold(dir, { nodeArgs })), cfg, nodeArgs };
    ctx.bareUnix = await startBare(join(dir, 'bare.sock'));
    ctx.bareTcp = await startBare(`127.0.0.1:${await freePort()}`);
    for (const [i, c] of selected.entries()) {
      log(`[${i + 1}/${selected.length}] ${c.id} ...`);
      const r = await runCase(c, ctx);
      results.set(c.id, r);
      log(
        `    ${r.value ?? '-'} ${r.unit} vs ${r.baseline ?? '-'}${r.ratio !== null ? ` (${r.ratio}x)` : ''} ${r.pass ? 'pass' : 'FAIL'}${r.note ? ' - ' + r.note : ''} [${r.seconds} s]`,
      );
    }
  } finally {
    await ctx?.bareUnix?.stop();
    await ctx?.bareTcp?.stop();
    await ctx?.kh?.stop();
    killAll();
    if (!args.keep) rmSync(dir, { recursive: true, force: true });
  }
  const cases = CASE_IDS.filter((id) => results.has(id)).map((id) => results.get(id));
  const result = { machine, mode, config: cfg, cases };
  printReport(result);
  const out = args.out ?? (args.only ? null : join(ROOT, 'bench', 'results', 'latest.json'));
  if (out) {
    writeResult(out, result);
    log(`wrote ${out}`);
  }
}

main().catch((e) => {
  killAll();
  process.stderr.write(`bench failed: ${e.stack ?? e}\n`);
  process.exit(1);
});
