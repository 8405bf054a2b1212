/**
 * Running another program the way a shell's `exec` would, shared by `keyhold run` and the agent's
 * `exec` stanza: start it with an environment (never argv) holding the secrets, report a missing
 * program as 127 and one that cannot run as 126, pass keyhold's signals on to it, stop it with a
 * signal and SIGKILL after a grace time, and end keyhold as it ended.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';

/** Signals passed on to the child (SIGINT/SIGQUIT only when not on a terminal: see forwardSignals). */
export const FORWARDED: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGWINCH'];

/** How a child ended. */
export type Ending = { code: number } | { signal: NodeJS.Signals };

/**
 * Start `command` with `env`. `onEnd` is called once: with the child's exit, or with 127 (not found) /
 * 126 (cannot run, `spawnFailed`) after a line on stderr naming the program (never its environment),
 * prefixed `who`.
 */
export function startChild(
  command: string[],
  env: NodeJS.ProcessEnv,
  who: string,
  onEnd: (e: Ending, spawnFailed: boolean) => void,
): ChildProcess {
  const p = spawn(command[0]!, command.slice(1), { stdio: 'inherit', env });
  let ended = false;
  const end = (e: Ending, spawnFailed: boolean) => {
    if (ended) return;
    ended = true;
    onEnd(e, spawnFailed);
  };
  p.on('error', (e: NodeJS.ErrnoException) => {
    const code = e.code === 'ENOENT' ? 127 : 126;
    process.stderr.write(
      `${who}: ${command[0]}: ${e.code === 'ENOENT' ? 'command not found' : e.code === 'EACCES' ? 'permission denied' : e.message}\n`,
    );
    end({ code }, true);
  });
  p.on('exit', (code, signal) => end(signal ? { signal } : { code: code ?? 1 }, false));
  return p;
}

/**
 * While a child runs, keyhold passes signals on to it instead of ending (the CLI's own SIGINT/SIGTERM
 * handlers are set aside). `target()` names the current child, or handles the signal itself when it
 * returns null. Returns the function that restores the previous handlers.
 */
export function forwardSignals(target: (sig: NodeJS.Signals) => ChildProcess | null): () => void {
  const saved = FORWARDED.map((s) => [s, process.listeners(s)] as const);
  for (const [s] of saved) process.removeAllListeners(s);
  const onSignal = (sig: NodeJS.Signals) => {
    const child = target(sig);
    // In a terminal, Ctrl-C and Ctrl-\ already reach the child (same process group): passing them
    // on as well would deliver them twice.
    if ((sig === 'SIGINT' || sig === 'SIGQUIT') && process.stdin.isTTY) return;
    child?.kill(sig);
  };
  for (const s of FORWARDED) process.on(s, onSignal);
  return () => {
    for (const s of FORWARDED) process.off(s, onSignal);
    for (const [s, listeners] of saved) for (const l of listeners) process.on(s, l as NodeJS.SignalsListener);
  };
}

/** Send `signal`, then SIGKILL when the child still runs after `graceSeconds`. */
export function stopChild(p: ChildProcess, signal: NodeJS.Signals, graceSeconds: number): void {
  if (p.exitCode !== null || p.signalCode !== null) return;
  p.kill(signal);
  const t = setTimeout(() => {
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  }, graceSeconds * 1000);
  t.unref();
  p.once('exit', () => clearTimeout(t));
}

/** A signal name from `HUP`, `sighup` or `SIGHUP`; undefined when the system has no such signal. */
export function signalNamed(s: string): NodeJS.Signals | undefined {
  const up = s.toUpperCase();
  const name = (up.startsWith('SIG') ? up : `SIG${up}`) as NodeJS.Signals;
  return name in osConstants.signals ? name : undefined;
}

/** The exit status of keyhold when the child ended so: its exit code, or 128 + the signal's number (the signal is raised again). */
export function exitLike(e: Ending): number {
  if ('code' in e) return e.code;
  const n = osConstants.signals[e.signal] ?? 0;
  process.exitCode = 128 + n;
  // Re-raise with the default action so a parent shell sees "killed by signal", as with exec.
  process.removeAllListeners(e.signal);
  try {
    process.kill(process.pid, e.signal);
  } catch {
    /* exitCode stands */
  }
  return 128 + n;
}
