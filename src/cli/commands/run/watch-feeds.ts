/**
 * `keyhold run --watch`: which referenced secrets may have changed. Per KV v2 mount of an unpinned
 * reference, keyhold follows the mount's change events (GET MOUNT/events with a cursor) and suspects a
 * change only when an event names one of them (or events were lost). A mount whose events the token
 * may not read, and KV v1 mounts, are suspected at every check instead. supervise.ts confirms a
 * suspected change by the secrets' versions (v1: a hash), then debounces it and acts once.
 */
import { ServerError } from '../../errors.js';
import type { RefResolver, SecretRef } from '../../secret-refs.js';

/** One mount's feed: the watched paths inside it, whether its events can be read, and where they were read up to. */
interface Feed {
  inner: Set<string>;
  events: boolean;
  cursor?: { epoch: string; index: number };
}

/** The change feeds of the unpinned references, by mount. */
export class WatchFeeds {
  private readonly feeds = new Map<string, Feed>();
  private firstCheck = true;

  /** `intervalSec`: how often the caller checks (named in the notice when a mount falls back to re-reading). */
  constructor(
    private readonly refs: SecretRef[],
    private readonly resolver: RefResolver,
    private readonly intervalSec: number,
  ) {}

  /** True when a watched secret may have changed since the last check (the first check always says so). */
  async suspectChange(): Promise<boolean> {
    if (this.feeds.size === 0) await this.setUp();
    let suspect = this.firstCheck; // closes the gap between the first read and the first cursor
    this.firstCheck = false;
    for (const [mount, feed] of this.feeds) {
      if (!feed.events) {
        suspect = true;
        continue;
      }
      const mp = mount.split('/').filter(Boolean).map(encodeURIComponent).join('/');
      try {
        const res = await this.resolver.client.read(`${mp}/events`, {
          index: String(feed.cursor?.index ?? 0),
          epoch: feed.cursor?.epoch ?? '',
        });
        const d = (res.body?.data ?? {}) as {
          epoch?: string;
          index?: number;
          truncated?: boolean;
          events?: { path: string }[];
        };
        if (feed.cursor && (d.truncated || (d.events ?? []).some((e) => feed.inner.has(e.path)))) suspect = true;
        feed.cursor = { epoch: String(d.epoch ?? ''), index: Number(d.index ?? 0) };
      } catch (e) {
        if (!(e instanceof ServerError) || ![403, 404, 405].includes(e.status)) throw e;
        feed.events = false;
        suspect = true;
        process.stderr.write(
          `keyhold run: --watch: cannot read ${mount}events (${e.status}); re-reading its secrets every ${this.intervalSec}s instead\n`,
        );
      }
    }
    return suspect;
  }

  /** Find the mount of each unpinned reference (KV v2 mounts have events to follow). */
  private async setUp(): Promise<void> {
    for (const r of this.refs) {
      if (r.version !== undefined) continue;
      const at = await this.resolver.locate(r);
      const feed = this.feeds.get(at.mount) ?? { inner: new Set<string>(), events: at.version === 2 };
      feed.inner.add(at.inner);
      this.feeds.set(at.mount, feed);
    }
  }
}
