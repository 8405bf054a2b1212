/**
 * The recent KV change events of one mount, readable over HTTP with a cursor (`GET MOUNT/events`,
 * a keyhold extension): what `keyhold run --watch` follows instead of re-reading every secret. The
 * events come from the in-process bus secret sync also listens to (src/framework/events.ts); they
 * carry paths and version numbers, never values. A bounded ring: a reader that falls behind, or a
 * daemon restart (new epoch), is told `truncated` and re-reads what it needs.
 */
import { randomBytes } from 'node:crypto';
import type { EventBus, KvEvent } from '../../framework/context.js';

/** One change as `MOUNT/events` answers it. */
export interface KvChange {
  index: number;
  kind: KvEvent['kind'];
  path: string;
  version: number;
  current_version: number;
}

/** Events kept per mount. */
const CAPACITY = 1024;

/** Every long poll of the process, and whether the daemon is stopping (no poll waits then). */
const everyWaiter = new Set<() => void>();
let released = false;

/** The daemon is stopping: answer every long poll now, and do not wait in new ones. */
export function releaseLongPolls(): void {
  released = true;
  for (const w of [...everyWaiter]) w();
}

/** The last CAPACITY changes of one mount, numbered from 1 in this process (`epoch` names the process). */
export class KvChangeLog {
  /** Differs per daemon run, so a cursor from an earlier run is recognised. */
  readonly epoch = randomBytes(8).toString('hex');
  private readonly ring: KvChange[] = [];
  private last = 0;
  private readonly off: () => void;
  /** Long-polling readers (`wait`), woken by the next change. */
  private readonly waiters = new Set<() => void>();

  constructor(bus: EventBus, accessor: string) {
    this.off = bus.on('kv', (e) => {
      if (e.mountAccessor !== accessor) return;
      this.ring.push({
        index: ++this.last,
        kind: e.kind,
        path: e.path,
        version: e.version,
        current_version: e.currentVersion,
      });
      if (this.ring.length > CAPACITY) this.ring.shift();
      for (const w of [...this.waiters]) w();
    });
  }

  /**
   * Changes after `index`; `truncated` when some are gone (fell behind, or a cursor of another epoch).
   * Index 0 without this epoch starts now (no past events, only the cursor); index 0 with this
   * epoch is a cursor like any other (the mount had no change when it was taken).
   */
  since(index: number, epoch?: string): { epoch: string; index: number; events: KvChange[]; truncated: boolean } {
    const oldest = this.ring[0]?.index ?? this.last + 1;
    const foreign = (epoch !== undefined && epoch !== '' && epoch !== this.epoch) || index > this.last;
    const cursor = this.hasCursor(index, epoch);
    const truncated = cursor && (foreign || index < oldest - 1);
    const events = foreign || !cursor ? [] : this.ring.filter((c) => c.index > index);
    return { epoch: this.epoch, index: this.last, events, truncated };
  }

  private hasCursor(index: number, epoch?: string): boolean {
    return index > 0 || (epoch !== undefined && epoch !== '' && epoch === this.epoch);
  }

  /**
   * As `since`, but when there is nothing new yet, wait up to `seconds` for the next change
   * (a long poll: the keyhold agent's cache hears of a change as it happens).
   */
  async wait(index: number, epoch: string | undefined, seconds: number): Promise<ReturnType<KvChangeLog['since']>> {
    const now = this.since(index, epoch);
    if (released || seconds <= 0 || !this.hasCursor(index, epoch) || now.events.length > 0 || now.truncated) return now;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        everyWaiter.delete(done);
        resolve();
      };
      const timer = setTimeout(done, seconds * 1000);
      timer.unref();
      this.waiters.add(done);
      everyWaiter.add(done);
    });
    return this.since(index, epoch);
  }

  /** Stop listening (mount removed or daemon stopping); long polls answer at once. */
  close(): void {
    this.off();
    for (const w of [...this.waiters]) w();
  }
}
