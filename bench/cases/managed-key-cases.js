/**
 * Managed keys on SoftHSM2 (issue 15): transit sign (RSA-2048, CKM_RSA_PKCS) and encrypt (AES-256-GCM,
 * CKM_AES_GCM) through keyhold, 16 connections over the Unix socket. The baseline is what every other
 * HTTP case has (issue 32 part 5): a bare node:http server making the same PKCS#11 calls
 * (bench/baselines/pkcs11-server.js) behind the same load generator; the PKCS#11 calls in a bare loop
 * in one process (bench/lib/pkcs11-loop.js, the old baseline, which leaves out the HTTP cost) stay in
 * the detail, beside both servers' CPU time per request. keyhold runs a daemon of its own for these cases (dev mode, a `kms_library` stanza, a
 * private SoftHSM2 token in the bench directory); the managed keys use max_parallel = SESSIONS
 * sessions each. Targets: encrypt ratio >= 0.8, sign ratio >= 0.7.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, apiOk } from '../lib/http.js';
import { runLoad } from '../lib/load.js';
import { BIN, ROOT, cpuSecondsOf, runCmd, waitAnswer } from '../lib/procs.js';
import { startPkcs11Bare } from '../lib/pkcs11-bare.js';
import { MissingFeature } from '../lib/setup.js';
import { median } from '../lib/stats.js';

const MODULE = '/usr/lib/softhsm/libsofthsm2.so';
const PIN = '11223344';
const SESSIONS = 16;
const INPUT64 = Buffer.alloc(64, 7).toString('base64');
const ge = (on, limit) => ({ on, op: '>=', limit });

/** One daemon and token for both cases (created on first use, stopped by the run's killAll). */
let shared = null;

async function setup(ctx) {
  if (shared) return shared;
  if (!existsSync(MODULE))
    throw new MissingFeature(`${MODULE} not found (scripts/setup-test-env.sh installs softhsm2)`);
  const dir = join(ctx.dir, 'hsm');
  mkdirSync(join(dir, 'tokens'), { recursive: true });
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(
    conf,
    `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`,
  );
  const env = { ...process.env, SOFTHSM2_CONF: conf, KEYHOLD_HOME: dir, NO_COLOR: '1' };
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', 'bench', '--pin', PIN, '--so-pin', '55667788'], {
    env,
    stdio: 'pipe',
  });
  const cfg = join(dir, 'server.hcl');
  writeFileSync(cfg, `kms_library "pkcs11" {\n  name    = "softhsm"\n  library = "${MODULE}"\n}\n`);
  const socket = join(dir, 'keyhold.sock');
  const proc = spawn(
    process.execPath,
    [
      ...(ctx.nodeArgs ?? []),
      BIN,
      'server',
      '--dev',
      '--dev-root-token',
      'root',
      '--socket',
      socket,
      '--config',
      cfg,
      '--log-level',
      'warn',
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  proc.stdout.on('data', (c) => (out += c));
  proc.stderr.on('data', (c) => (out += c));
  const d = { proc, unix: { socketPath: socket }, output: () => out };
  // Not one of procs.js's tracked children: make sure it never outlives the run.
  process.once('exit', () => proc.kill('SIGKILL'));
  await waitAnswer(d);
  const key = async (name, body) => {
    await apiOk(
      d.unix,
      'POST',
      `sys/managed-keys/pkcs11/${name}`,
      {
        library: 'softhsm',
        token_label: 'bench',
        pin: PIN,
        allow_generate_key: true,
        any_mount: true,
        max_parallel: SESSIONS,
        key_label: name,
        ...body,
      },
      'root',
    );
    const t = await api(d.unix, 'POST', `sys/managed-keys/pkcs11/${name}/test/sign`, {}, 'root');
    if (t.status >= 300 && body.mechanism !== '0x1087')
      throw new Error(`test/sign ${name}: ${t.status} ${JSON.stringify(t.body)}`);
    await apiOk(d.unix, 'POST', `transit/keys/${name}`, { type: 'managed_key', managed_key_name: name }, 'root');
  };
  await key('bench-rsa', { mechanism: '0x0001', key_bits: 2048, usages: 'sign,verify' });
  await key('bench-aes', { mechanism: '0x1087' });
  // The AES key is generated on first use: make it exist before the baseline looks for it.
  await apiOk(d.unix, 'POST', 'transit/encrypt/bench-aes', { plaintext: INPUT64 }, 'root');
  const bare = await startPkcs11Bare({
    dir,
    env,
    module: MODULE,
    token: 'bench',
    pin: PIN,
    keys: { 'bench-rsa': 'bench-rsa', 'bench-aes': 'bench-aes' },
  });
  const stopDaemon = () =>
    new Promise((r) => (proc.exitCode !== null ? r() : (proc.once('exit', r), proc.kill('SIGTERM'))));
  const stop = async () => {
    await bare.stop();
    await stopDaemon();
  };
  shared = { d, env, bare, stop };
  return shared;
}

async function loop(ctx, env, label, op) {
  const r = await runCmd(process.execPath, [join(ROOT, 'bench', 'lib', 'pkcs11-loop.js')], {
    input: JSON.stringify({
      module: MODULE,
      token: 'bench',
      pin: PIN,
      label,
      op,
      warmupSec: ctx.cfg.warmupSec,
      durationSec: ctx.cfg.durationSec,
    }),
    env,
  });
  if (r.code !== 0) throw new Error(`pkcs11 loop failed: ${r.stderr.toString().slice(-400)}`);
  return JSON.parse(r.stdout.toString().trim().split('\n').pop()).rate;
}

function managedCase(id, op, path, body, label, target) {
  return {
    id,
    unit: 'req/s',
    checks: [ge('ratio', target)],
    describe: `transit ${op} with a managed key on SoftHSM2 (${op === 'sign' ? 'RSA-2048, CKM_RSA_PKCS' : 'AES-256-GCM'}), Unix socket, 16 connections, ${SESSIONS} PKCS#11 sessions; baseline: a bare node:http server making the same PKCS#11 calls in-process (one session), same load generator; the bare PKCS#11 loop in one process is in the detail (loop_rps, loop_ratio)`,
    async run(ctx) {
      const { d, env, bare, stop } = await setup(ctx);
      try {
        const ks = [];
        const bs = [];
        const ls = [];
        let bad = 0;
        // Server CPU per request (all threads, user + system, from /proc): steadier than req/s on a shared machine.
        const kc = [];
        const bc = [];
        const load = async (t, pid, cpu) => {
          const c0 = cpuSecondsOf(pid);
          const r = await runLoad({
            target: t,
            path: `/v1/${path}`,
            headers: { 'X-Vault-Token': 'root' },
            body,
            connections: 16,
            warmupSec: ctx.cfg.warmupSec,
            durationSec: ctx.cfg.durationSec,
          });
          const c1 = cpuSecondsOf(pid);
          if (c0 !== null && c1 !== null && r.ok > 0) cpu.push(((c1 - c0) * 1e6) / (r.ok + (r.warmupOk ?? 0)));
          return r;
        };
        for (let i = 0; i < ctx.cfg.reps; i++) {
          const b = await load(bare.target, bare.pid, bc);
          if (b.ok === 0) throw new Error(`pkcs11 baseline server answered no 2xx: ${JSON.stringify(b.statuses)}`);
          bs.push(b.rps);
          const k = await load(d.unix, d.proc.pid, kc);
          ks.push(k.rps);
          bad += k.bad;
          ls.push(await loop(ctx, env, label, op));
        }
        const value = median(ks);
        return {
          value,
          baseline: median(bs),
          detail: {
            keyhold_reps: ks,
            baseline_reps: bs,
            keyhold_cpu_us_per_req: kc.length ? median(kc) : null,
            baseline_cpu_us_per_req: bc.length ? median(bc) : null,
            loop_rps: median(ls),
            loop_ratio: value / median(ls),
            loop_reps: ls,
            sessions: SESSIONS,
            connections: 16,
          },
          bad,
        };
      } finally {
        if (id === 'managed-encrypt-aes-gcm') await stop();
      }
    },
  };
}

/** Cases of this file (sign runs first; the encrypt case stops the shared daemon). */
export const managedKeyCases = [
  managedCase(
    'managed-sign-rsa-2048',
    'sign',
    'transit/sign/bench-rsa',
    { input: INPUT64, signature_algorithm: 'pkcs1v15' },
    'bench-rsa',
    0.7,
  ),
  managedCase(
    'managed-encrypt-aes-gcm',
    'encrypt',
    'transit/encrypt/bench-aes',
    { plaintext: INPUT64 },
    'bench-aes',
    0.8,
  ),
];
