/**
 * COMMAND under `keyhold run`: started with the resolved environment; with --watch, restarted (or sent
 * --signal) when a referenced secret changes. Signals sent to keyhold are passed on; keyhold ends the
 * way COMMAND ended.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { LocalError } from '../../errors.js';
import { resolveRefs, type RefResolver, type Resolution } from '../../secret-refs.js';
import type { Sources } from './sources.js';
import { WatchFeeds } from './watch-feeds.js';

/** Signals keyhold passes on to COMMAND (SIGINT/SIGQUIT too: see forwardSignals). */
const FORWARDED: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGWINCH'];

export function signalName(s: string): NodeJS.Signals {
  const name = (s.toUpperCase().startsWith('SIG') ? s.toUpperCase() : `SIG${s.toUpperCase()}`) as NodeJS.Signals;
  if (!(name in osConstants.signals)) throw new LocalError(`--signal: unknown signal ${s}`);
  return name;
}

/** How COMMAND ended. */
export type Ending = { code: number } | { signal: NodeJS.Signals };

export interface SuperviseOptions {
  watch: boolean;
  signal?: NodeJS.Signals;
  /** Seconds. */
  interval: number;
  debounce: number;
  killTimeout: number;
}

/** Start COMMAND (and, with --watch, restart or signal it on change); resolves with how it finally ended. */
export function supervise(command: string[], src: Sources, first: Resolution, resolver: RefResolver, o: SuperviseOptions): Promise<Ending> {
  return new Promise((resolveEnding, rejectEnding) => {
    let child: ChildProcess | null = null;
    let restarting = false;
    let stopped = false;
    let timer: NodeJS.Timeout | null = null;
    let current = first;

    const start = (res: Resolution) => {
      const env = { ...src.env, ...res.values };
      const p = spawn(command[0]!, command.slice(1), { stdio: 'inherit', env });
      child = p;
      p.on('error', (e: NodeJS.ErrnoException) => {
        // Only the command's name, never its environment.
        const code = e.code === 'ENOENT' ? 127 : 126;
        process.stderr.write(`keyhold run: ${command[0]}: ${e.code === 'ENOENT' ? 'command not found' : e.code === 'EACCES' ? 'permission denied' : e.message}\n`);
        finish({ code });
      });
      p.on('exit', (code, signal) => {
        if (child !== p) return;
        if (restarting) {
          restarting = false;
          start(current);
          return;
        }
        finish(signal ? { signal } : { code: code ?? 1 });
      });
    };

    // The CLI's own SIGINT/SIGTERM handlers (src/cli/signals.ts) end the process at once; while
    // COMMAND runs, keyhold passes signals on and ends as COMMAND ends instead. Restored at the end.
    const saved = FORWARDED.map((s) => [s, process.listeners(s)] as const);
    for (const [s] of saved) process.removeAllListeners(s);
    const onSignal = (sig: NodeJS.Signals) => {
      // In a terminal, Ctrl-C and Ctrl-\ already reach COMMAND (same process group): passing them
      // on as well would deliver them twice. Otherwise every signal is passed on.
      if ((sig === 'SIGINT' || sig === 'SIGQUIT') && process.stdin.isTTY) return;
      child?.kill(sig);
    };
    for (const s of FORWARDED) process.on(s, onSignal);

    const finish = (e: Ending) => {
      if (stopped) return;
      stopped = true;
      if (timer) clearTimeout(timer);
      for (const s of FORWARDED) process.off(s, onSignal);
      for (const [s, listeners] of saved) for (const l of listeners) process.on(s, l as NodeJS.SignalsListener);
      resolveEnding(e);
    };

    const changed = (a: Map<string, string>, b: Map<string, string>) => [...a].some(([k, v]) => b.get(k) !== v);

    // --watch: the mounts' change events say when to re-read (watch-feeds.ts); a change is confirmed by
    // the secrets' versions (v1: a hash), then debounced, then acted on once.
    const feeds = new WatchFeeds(src.refs, resolver, o.interval);
    const poll = async () => {
      if (stopped) return;
      try {
        if (await feeds.suspectChange()) {
          const next = await resolveRefs(resolver, src.refs);
          if (changed(current.fingerprints, next.fingerprints)) {
            await new Promise((r) => setTimeout(r, o.debounce * 1000));
            current = await resolveRefs(resolver, src.refs);
            act();
          }
        }
      } catch (e) {
        // A secret gone or access revoked: keep COMMAND running with what it has, say so once per check.
        process.stderr.write(`keyhold run: --watch: ${(e as Error).message}\n`);
      }
      if (!stopped) timer = setTimeout(() => void poll(), o.interval * 1000);
    };

    const act = () => {
      const p = child;
      if (!p || stopped) return;
      if (o.signal) {
        p.kill(o.signal);
        return;
      }
      restarting = true;
      p.kill('SIGTERM');
      const t = setTimeout(() => {
        if (child === p && p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
      }, o.killTimeout * 1000);
      t.unref();
    };

    try {
      start(current);
    } catch (e) {
      rejectEnding(e);
      return;
    }
    if (o.watch && src.refs.some((r) => r.version === undefined)) timer = setTimeout(() => void poll(), o.interval * 1000);
  });
}

/** The exit status of keyhold when COMMAND ended so: its exit code, or 128 + the signal's number (the signal is raised again). */
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
