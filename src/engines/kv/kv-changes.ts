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

/** The last CAPACITY changes of one mount, numbered from 1 in this process (`epoch` names the process). */
export class KvChangeLog {
  /** Differs per daemon run, so a cursor from an earlier run is recognised. */
  readonly epoch = randomBytes(8).toString('hex');
  private readonly ring: KvChange[] = [];
  private last = 0;
  private readonly off: () => void;

  constructor(bus: EventBus, accessor: string) {
    this.off = bus.on('kv', (e) => {
      if (e.mountAccessor !== accessor) return;
      this.ring.push({ index: ++this.last, kind: e.kind, path: e.path, version: e.version, current_version: e.currentVersion });
      if (this.ring.length > CAPACITY) this.ring.shift();
    });
  }

  /** Changes after `index`; `truncated` when some are gone (fell behind, or a cursor of another epoch). */
  since(index: number, epoch?: string): { epoch: string; index: number; events: KvChange[]; truncated: boolean } {
    const oldest = this.ring[0]?.index ?? this.last + 1;
    const foreign = (epoch !== undefined && epoch !== '' && epoch !== this.epoch) || index > this.last;
    const truncated = index > 0 && (foreign || index < oldest - 1);
    // Cursor 0 starts now: no past events, only the cursor.
    const events = foreign || index === 0 ? [] : this.ring.filter((c) => c.index > index);
    return { epoch: this.epoch, index: this.last, events, truncated };
  }

  /** Stop listening (mount removed or daemon stopping). */
  close(): void {
    this.off();
  }
}
