/** Start bench/baselines/pkcs11-server.js (the managed-key cases' HTTP baseline) on a Unix socket. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './procs.js';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `{target, pid, stop}` of a running baseline server; `keys` maps path names to CKA_LABELs. */
export async function startPkcs11Bare({ dir, env, module, token, pin, keys }) {
  const socket = join(dir, 'pkcs11-bare.sock');
  const proc = spawn(process.execPath, [join(ROOT, 'bench', 'baselines', 'pkcs11-server.js'), socket], {
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (c) => (out += c));
  proc.stderr.on('data', (c) => (out += c));
  proc.stdin.end(JSON.stringify({ module, token, pin, keys }));
  process.once('exit', () => proc.kill('SIGKILL'));
  for (let i = 0; i < 1000 && !out.includes('ready'); i++) {
    if (proc.exitCode !== null) throw new Error(`pkcs11 baseline server exited: ${out.slice(-400)}`);
    await sleep(10);
  }
  if (!out.includes('ready')) throw new Error(`pkcs11 baseline server did not start: ${out.slice(-400)}`);
  return {
    target: { socketPath: socket },
    pid: proc.pid,
    stop: () => new Promise((r) => (proc.exitCode !== null ? r() : (proc.once('exit', r), proc.kill('SIGTERM')))),
  };
}
