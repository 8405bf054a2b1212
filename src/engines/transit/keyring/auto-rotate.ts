/**
 * Auto-rotation (reference transit-wire.md section 7.3): a key is rotated when
 * `now > creation time of its latest version + auto_rotate_period`. A full scan of all keys runs at
 * start-up and hourly; between scans, due times are kept in memory and checked every minute, and
 * the store reports every change (create, config, rotate, restore, delete) so the table stays exact.
 * Because the due time derives from stored version times, rotation survives restarts.
 */
import type { Clock, Logger } from '../../../framework/context.js';
import { KEY_TYPES } from './key-types.js';
import type { TransitKeyStore } from './key-store.js';
import type { TransitKey } from './types.js';

/** Timings of the scheduler (milliseconds). */
export interface AutoRotateTimings {
  tickMs: number;
  scanMs: number;
}

/** Default timings: check due keys every minute, rescan storage hourly. */
export const DEFAULT_AUTO_ROTATE_TIMINGS: AutoRotateTimings = { tickMs: 60_000, scanMs: 3_600_000 };

/** Whether the scheduler may rotate this key at all. */
function rotatable(
  k: Pick<TransitKey, 'autoRotatePeriod' | 'importedKey' | 'allowImportedKeyRotation' | 'type' | 'softDeleted'>,
): boolean {
  return (
    !k.softDeleted &&
    k.autoRotatePeriod > 0 &&
    !(k.importedKey && !k.allowImportedKeyRotation) &&
    KEY_TYPES[k.type].kind !== 'managed'
  );
}

/** The auto-rotation scheduler of one transit mount. */
export class AutoRotator {
  private readonly due = new Map<string, number>();
  private timers: NodeJS.Timeout[] = [];
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly store: TransitKeyStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly timings: AutoRotateTimings = DEFAULT_AUTO_ROTATE_TIMINGS,
  ) {
    store.onChange((name, key) => this.track(name, key));
  }

  /** Start: scan now (in the background), then tick and rescan on the timings. */
  start(): void {
    this.kick(true);
    this.timers.push(setInterval(() => this.kick(false), this.timings.tickMs).unref());
    this.timers.push(setInterval(() => this.kick(true), this.timings.scanMs).unref());
  }

  /** Stop the timers and wait for a running pass. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await this.running;
  }

  /** Due time (ms) of a key, or undefined when it is not scheduled (tests, status). */
  dueAt(name: string): number | undefined {
    return this.due.get(name);
  }

  /** Run a scan (optional) and rotate what is due; resolves when done. */
  async runOnce(scan: boolean): Promise<void> {
    if (scan) await this.scan();
    await this.rotateDue();
  }

  private kick(scan: boolean): void {
    if (this.running || this.stopped) return;
    this.running = this.runOnce(scan)
      .catch((e: unknown) => this.logger.error('transit auto-rotation pass failed', { error: (e as Error).message }))
      .finally(() => {
        this.running = null;
      });
  }

  private track(name: string, key: TransitKey | null): void {
    if (!key || !rotatable(key)) {
      this.due.delete(name);
      return;
    }
    const latest = key.versions.get(key.latestVersion);
    if (!latest) return;
    const at = (latest.creationTime + key.autoRotatePeriod) * 1000;
    this.due.set(name, at);
    // A key that is already overdue (restored, or its period shortened) rotates now, not at the next tick.
    if (at < this.clock.now() && this.timers.length > 0) setImmediate(() => this.kick(false));
  }

  private async scan(): Promise<void> {
    const seen = new Set<string>();
    for (const name of await this.store.list()) {
      if (this.stopped) return;
      seen.add(name);
      const cfg = await this.store.peekConfig(name);
      if (!cfg || !rotatable(cfg)) {
        this.due.delete(name);
        continue;
      }
      const key = await this.store.get(name);
      if (key) this.track(name, key);
    }
    for (const name of this.due.keys()) if (!seen.has(name)) this.due.delete(name);
  }

  private async rotateDue(): Promise<void> {
    const now = this.clock.now();
    for (const [name, at] of [...this.due]) {
      if (this.stopped) return;
      if (now <= at) continue;
      try {
        await this.store.withLock(name, 'exclusive', async () => {
          const key = await this.store.get(name);
          if (!key || !rotatable(key)) return;
          const latest = key.versions.get(key.latestVersion);
          if (!latest || this.clock.now() <= (latest.creationTime + key.autoRotatePeriod) * 1000) return;
          await this.store.rotateLocked(key, (m) => new Error(m));
          this.logger.info('transit key auto-rotated', { key: name, version: key.latestVersion });
        });
      } catch (e) {
        this.logger.error('transit auto-rotation failed', { key: name, error: (e as Error).message });
        this.due.delete(name);
      }
    }
  }
}
