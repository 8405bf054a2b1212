/**
 * Following one KV v2 mount's change events for the agent's cache: a long poll on
 * `GET MOUNT/events?index=N&epoch=E&wait=25` (a keyhold extension) with the agent's token, so a
 * change on the server reaches the cache as it happens. Every change, and every break in the feed
 * (truncated, new epoch after a server restart, an error), moves the mount's generation on: the
 * cache drops what it holds for the path (or the whole mount) and refuses to store a read that
 * started before the change.
 */
import type { AgentLog } from '../log.js';
import type { Upstream } from '../upstream.js';

const WAIT_SECONDS = 25;

export class KvEventFeed {
  /** Moves on with every change or break; a read may be stored only if it did not move meanwhile. */
  generation = 0;
  /** True while the feed is connected with a cursor (only then may reads be cached). */
  live = false;
  private stopped = false;
  private readonly abort = new AbortController();
  private cursor: { index: number; epoch: string } = { index: 0, epoch: '' };

  constructor(
    readonly mount: string,
    private readonly up: Upstream,
    private readonly token: () => string | undefined,
    private readonly onChange: (paths: string[] | 'all') => void,
    private readonly log: AgentLog,
  ) {}

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.live = false;
    this.abort.abort();
  }

  private broken(why: string): void {
    if (this.live) this.log.debug('agent.cache', `${this.mount}events: ${why}; dropping the mount's cached reads`);
    this.live = false;
    this.generation++;
    this.onChange('all');
  }

  private async loop(): Promise<void> {
    let backoff = 0.25;
    while (!this.stopped) {
      const token = this.token();
      if (!token) {
        await sleep(250);
        continue;
      }
      try {
        const q = new URLSearchParams({
          index: String(this.cursor.index),
          epoch: this.cursor.epoch,
          wait: this.live ? String(WAIT_SECONDS) : '0',
        });
        const r = await this.up.json('GET', `${this.mount}events?${q}`, {
          token,
          timeoutMs: (WAIT_SECONDS + 10) * 1000,
          signal: this.abort.signal,
        });
        const d = (r.body?.data ?? {}) as {
          epoch?: string;
          index?: number;
          truncated?: boolean;
          events?: { path: string }[];
        };
        const epoch = String(d.epoch ?? '');
        if (this.live && (d.truncated || epoch !== this.cursor.epoch)) this.broken('events lost');
        else if (this.live && d.events?.length) {
          this.generation++;
          this.onChange(d.events.map((e) => e.path));
        }
        this.cursor = { index: Number(d.index ?? 0), epoch };
        if (!this.live) {
          this.generation++;
          this.live = true;
        }
        backoff = 0.25;
      } catch (e) {
        this.broken((e as Error).message);
        if (this.stopped) return;
        this.cursor = { index: 0, epoch: '' };
        await sleep(backoff * 1000);
        backoff = Math.min(backoff * 2, 10);
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
