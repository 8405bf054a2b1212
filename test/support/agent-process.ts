/**
 * Running real `keyhold agent` processes in integration tests: start one on config files, wait
 * for what it writes, stop it; every agent started is killed at the end (killAgents) if a failed
 * test left it running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { BIN, type Answer } from './daemon.js';

export interface RunningAgent {
  proc: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

const started = new Set<ChildProcess>();

/**
 * `keyhold agent -config C...` in `cwd` against `addr` (VAULT_ADDR); no token or keyhold address
 * from the test's own environment leaks in.
 */
export function startAgent(
  configs: string[],
  cwd: string,
  addr: string,
  env: Record<string, string> = {},
): RunningAgent {
  const args = [BIN, 'agent', ...configs.flatMap((c) => ['-config', c])];
  const proc = spawn(process.execPath, args, {
    cwd,
    env: {
      ...process.env,
      VAULT_ADDR: addr,
      KEYHOLD_HOME: cwd,
      VAULT_TOKEN: '',
      KEYHOLD_TOKEN: '',
      KEYHOLD_ADDR: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  started.add(proc);
  const exited = new Promise<number | null>((r) => proc.once('exit', (code, sig) => r(code ?? (sig ? -1 : null))));
  return { proc, output: () => out, exited };
}

/** SIGTERM (when still running); resolves to the exit code. */
export async function stopAgent(a: RunningAgent): Promise<number | null> {
  if (a.proc.exitCode === null && a.proc.signalCode === null) a.proc.kill('SIGTERM');
  return a.exited;
}

/** SIGKILL every agent still running (afterAll). */
export function killAgents(): void {
  for (const p of started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
}

/** `r` when its status is `status` (200 also accepts 204), else an error with the answer's text. */
export function ok(r: Answer, status = 200): Answer {
  if (r.status !== status && !(status === 200 && r.status === 204))
    throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 300)}`);
  return r;
}

/** Poll `fn` every 50 ms until it gives a truthy value, for at most `ms`. */
export async function until<T>(fn: () => T | Promise<T>, what: string, ms = 15_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

/** A file's text, or '' while it does not exist. */
export const read = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8') : '');
