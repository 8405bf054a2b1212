/**
 * COMMAND under `keyhold run`: started with the resolved environment; with --watch, restarted (or sent
 * --signal) when a referenced secret changes. Signals sent to keyhold are passed on; keyhold ends the
 * way COMMAND ended.
 */
import type { ChildProcess } from 'node:child_process';
import { LocalError } from '../../errors.js';
import { resolveRefs, type RefResolver, type Resolution } from '../../secret-refs.js';
import { forwardSignals, signalNamed, startChild, stopChild, type Ending } from '../../child-process.js';
import type { Sources } from './sources.js';
import { WatchFeeds } from './watch-feeds.js';

// Process handling (127/126, signals passed on, stop with a grace time, ending as COMMAND ended) is
// shared with the agent's exec stanza: src/cli/child-process.ts.
export { exitLike, type Ending } from '../../child-process.js';

export function signalName(s: string): NodeJS.Signals {
  const name = signalNamed(s);
  if (!name) throw new LocalError(`--signal: unknown signal ${s}`);
  return name;
}

export interface SuperviseOptions {
  watch: boolean;
  signal?: NodeJS.Signals;
  /** Seconds. */
  interval: number;
  debounce: number;
  killTimeout: number;
}

/** Start COMMAND (and, with --watch, restart or signal it on change); resolves with how it finally ended. */
export function supervise(
  command: string[],
  src: Sources,
  first: Resolution,
  resolver: RefResolver,
  o: SuperviseOptions,
): Promise<Ending> {
  return new Promise((resolveEnding, rejectEnding) => {
    let child: ChildProcess | null = null;
    let restarting = false;
    let stopped = false;
    let timer: NodeJS.Timeout | null = null;
    let current = first;

    const start = (res: Resolution) => {
      const env = { ...src.env, ...res.values };
      const p = startChild(command, env, 'keyhold run', (e, spawnFailed) => {
        if (child !== p) return;
        if (restarting && !spawnFailed) {
          restarting = false;
          start(current);
          return;
        }
        finish(e);
      });
      child = p;
    };

    // The CLI's own SIGINT/SIGTERM handlers (src/cli/signals.ts) end the process at once; while
    // COMMAND runs, keyhold passes signals on and ends as COMMAND ends instead. Restored at the end.
    const restoreSignals = forwardSignals(() => child);

    const finish = (e: Ending) => {
      if (stopped) return;
      stopped = true;
      if (timer) clearTimeout(timer);
      restoreSignals();
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
      stopChild(p, 'SIGTERM', o.killTimeout);
    };

    try {
      start(current);
    } catch (e) {
      rejectEnding(e);
      return;
    }
    if (o.watch && src.refs.some((r) => r.version === undefined))
      timer = setTimeout(() => void poll(), o.interval * 1000);
  });
}
