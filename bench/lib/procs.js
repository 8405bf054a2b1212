/**
 * Processes of the benchmark: the real keyhold daemon (file storage, production mode, token auth,
 * no keychain: init + unseal over HTTP), the bare baseline servers, child commands timed by wall
 * clock, and RSS read from /proc.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, apiOk, closeIdle } from './http.js';

/** Repository root and the keyhold binary shim. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'keyhold.js');
const BARE = join(ROOT, 'bench', 'baselines', 'bare-server.js');

const children = new Set();

/** Kill every child still running (on exit or error), by its own pid only. */
export function killAll() {
  for (const p of children) {
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  }
}
process.on('exit', killAll);

/** An unused TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function track(proc) {
  children.add(proc);
  let out = '';
  proc.stdout?.on('data', (c) => (out += c.toString()));
  proc.stderr?.on('data', (c) => (out += c.toString()));
  proc.once('exit', () => children.delete(proc));
  return () => out;
}

function stopProc(proc) {
  return new Promise((r) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return r(proc.exitCode);
    const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    proc.once('exit', (code) => {
      clearTimeout(t);
      r(code);
    });
    proc.kill('SIGTERM');
  });
}

/**
 * Spawn `keyhold server` in production mode on `storage` (a directory), listening on the Unix
 * socket `socket` and on 127.0.0.1:`port`. `nodeArgs` go before the script (e.g. --cpu-prof).
 * Resolves once /v1/sys/health answers anything, with `startedAt` (hrtime ms before spawn).
 */
export async function startKeyhold({ dir, socket, port, storage, nodeArgs = [], waitReady = true, serverArgs = [] }) {
  const args = [
    ...nodeArgs,
    BIN,
    'server',
    '--socket',
    socket,
    '--storage-path',
    storage,
    '--keychain',
    'none',
    '--log-level',
    'warn',
    ...serverArgs,
  ];
  if (port) args.push('--listen', `127.0.0.1:${port}`);
  const startedAt = performance.now();
  const proc = spawn(process.execPath, args, {
    env: { ...process.env, KEYHOLD_HOME: dir, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = track(proc);
  const d = {
    proc,
    pid: proc.pid,
    socket,
    startedAt,
    unix: { socketPath: socket },
    tcp: port ? { host: '127.0.0.1', port } : undefined,
    output,
    stop: async () => {
      closeIdle();
      return stopProc(proc);
    },
  };
  if (waitReady) await waitAnswer(d);
  return d;
}

/** Poll sys/health on the daemon's socket until it answers (any status); throws if it exits. */
export async function waitAnswer(d, intervalMs = 10, limit = 3000) {
  for (let i = 0; i < limit; i++) {
    if (d.proc.exitCode !== null) throw new Error(`daemon exited with ${d.proc.exitCode}: ${d.output().slice(-500)}`);
    try {
      await api(d.unix, 'GET', 'sys/health');
      return;
    } catch {
      await sleep(intervalMs);
    }
  }
  throw new Error(`daemon did not answer: ${d.output().slice(-500)}`);
}

/** First start of a new storage: init without keychain, unseal with the recovery key. */
export async function initAndUnseal(d) {
  const init = await apiOk(d.unix, 'POST', 'sys/init', { secret_shares: 1, secret_threshold: 1, keychain: false });
  const key = init.keys_base64?.[0] ?? init.keys?.[0];
  await unseal(d, key);
  return { recoveryKey: key, rootToken: init.root_token };
}

/** Unseal with the recovery key; throws if still sealed. */
export async function unseal(d, key) {
  const st = await apiOk(d.unix, 'POST', 'sys/unseal', { key });
  if (st.sealed) throw new Error('daemon still sealed after unseal');
}

/** Start the bare baseline server on a Unix socket path or "127.0.0.1:port". */
export async function startBare(where) {
  const proc = spawn(process.execPath, [BARE, where], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = track(proc);
  for (let i = 0; i < 1000 && !output().includes('ready'); i++) {
    if (proc.exitCode !== null) throw new Error(`bare server exited: ${output()}`);
    await sleep(10);
  }
  const m = /^(.*):(\d+)$/.exec(where);
  return {
    proc,
    pid: proc.pid,
    target: m ? { host: m[1], port: Number(m[2]) } : { socketPath: where },
    stop: () => stopProc(proc),
  };
}

/**
 * Run a command to completion; resolves {code, stdout (Buffer), stderr, ms}. `input` goes to
 * stdin. Wall time is measured around spawn..exit in this process.
 */
export function runCmd(cmd, args, { input, env, timeoutMs = 600_000, stdoutLimit = 64 << 20 } = {}) {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const proc = spawn(cmd, args, { env: env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(proc);
    const out = [];
    let outLen = 0;
    let err = '';
    proc.stdout.on('data', (c) => {
      if (outLen < stdoutLimit) out.push(c);
      outLen += c.length;
    });
    proc.stderr.on('data', (c) => (err += c.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.on('error', (e) => {
      clearTimeout(timer);
      rej(e);
    });
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(proc);
      res({
        code: code ?? (signal ? 128 : -1),
        signal,
        stdout: Buffer.concat(out),
        stderr: err,
        ms: performance.now() - t0,
      });
    });
    proc.stdin.on('error', () => {});
    proc.stdin.end(input);
  });
}

/** RSS and peak RSS (VmHWM) of a process in MB, from /proc; null off Linux. */
export function rssOf(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN);
    return { rssMB: kb('VmRSS') / 1024, hwmMB: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** CPU seconds (user + system, all threads) a process has used so far, from /proc; null off Linux. */
export function cpuSecondsOf(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}

/** Reset the peak-RSS counter of a process (Linux clear_refs "5"); false when not allowed. */
export function resetPeak(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
