/**
 * COMMAND under `keyhold run`: started with the resolved environment; with --watch, restarted (or sent
 * --signal) when a referenced secret changes. Signals sent to keyhold are passed on; keyhold ends the
 * way COMMAND ended.
 */
import type { ChildProcess } from 'node:child_process';
import { LocalError, ServerError } from '../../errors.js';
import { resolveRefs, type RefResolver, type Resolution } from '../../secret-refs.js';
import { forwardSignals, signalNamed, startChild, stopChild, type Ending } from '../../child-process.js';
import type { Sources } from './sources.js';

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
export function supervise(command: string[], src: Sources, first: Resolution, resolver: RefResolver, o: SuperviseOptions): Promise<Ending> {
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

    // --watch. Per KV v2 mount of an unpinned reference, keyhold follows the mount's change events
    // (GET MOUNT/events with a cursor) and re-reads the secrets only when an event names one of them
    // (or events were lost). A mount whose events the token may not read, and KV v1 mounts, are
    // re-read every interval instead. Either way a change is confirmed by the secrets' versions
    // (v1: a hash), then debounced, then acted on once.
    const feeds = new Map<string, { inner: Set<string>; events: boolean; cursor?: { epoch: string; index: number } }>();
    let firstCheck = true;
    const setUpFeeds = async () => {
      for (const r of src.refs) {
        if (r.version !== undefined) continue;
        const at = await resolver.locate(r);
        const feed = feeds.get(at.mount) ?? { inner: new Set<string>(), events: at.version === 2 };
        feed.inner.add(at.inner);
        feeds.set(at.mount, feed);
      }
    };
    const suspectChange = async (): Promise<boolean> => {
      let suspect = firstCheck; // closes the gap between the first read and the first cursor
      firstCheck = false;
      for (const [mount, feed] of feeds) {
        if (!feed.events) {
          suspect = true;
          continue;
        }
        const mp = mount.split('/').filter(Boolean).map(encodeURIComponent).join('/');
        try {
          const res = await resolver.client.read(`${mp}/events`, { index: String(feed.cursor?.index ?? 0), epoch: feed.cursor?.epoch ?? '' });
          const d = (res.body?.data ?? {}) as { epoch?: string; index?: number; truncated?: boolean; events?: { path: string }[] };
          if (feed.cursor && (d.truncated || (d.events ?? []).some((e) => feed.inner.has(e.path)))) suspect = true;
          feed.cursor = { epoch: String(d.epoch ?? ''), index: Number(d.index ?? 0) };
        } catch (e) {
          if (!(e instanceof ServerError) || ![403, 404, 405].includes(e.status)) throw e;
          feed.events = false;
          suspect = true;
          process.stderr.write(`keyhold run: --watch: cannot read ${mount}events (${e.status}); re-reading its secrets every ${o.interval}s instead\n`);
        }
      }
      return suspect;
    };
    const poll = async () => {
      if (stopped) return;
      try {
        if (feeds.size === 0) await setUpFeeds();
        if (await suspectChange()) {
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
    if (o.watch && src.refs.some((r) => r.version === undefined)) timer = setTimeout(() => void poll(), o.interval * 1000);
  });
}
