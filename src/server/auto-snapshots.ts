/**
 * Scheduled snapshots with Vault Enterprise's API (sys/storage/raft/snapshot-auto/config/:name and
 * .../status/:name; an Enterprise-only feature in Vault, a long-open request in OpenBao). Each config
 * takes a snapshot every `interval` into `path_prefix` as `<file_prefix>-<UTC time>.snap` (mode
 * 0600) and keeps the newest `retain` of them; `local_max_space` bounds the bytes its files may use.
 *
 * Only the node that writes takes them (a single daemon, or the cluster's active): a ticker on every
 * node looks once a second, and a standby never acts, so after a failover the new active carries on
 * from the stored configs. Configs live behind the barrier; the status of each is this node's memory.
 */
import { mkdir, readdir, rm, stat, writeFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../framework/context.js';
import { getJSON, prefixed, putJSON, type Storage } from '../storage/backend.js';
import type { Barrier } from '../storage/barrier.js';
import type { AutoSnapshotConfig, AutoSnapshotStatus } from '../engines/sys/ops-parts.js';

/** What scheduled snapshots need of the core (server/core/core.ts). */
export interface AutoSnapshotHost {
  readonly barrier: Barrier;
  readonly clock: { now(): number };
  readonly logger: Logger;
  readonly events: { on(topic: 'after-unseal' | 'before-seal', listener: () => void | Promise<void>): () => void };
  isSealed(): boolean;
  isStandby(): boolean;
  readonly snapshots: { save(): Promise<Buffer> };
}

const TICK_MS = 1000;

function emptyStatus(): AutoSnapshotStatus {
  return {
    consecutive_errors: 0,
    last_snapshot_start: '',
    last_snapshot_end: '',
    last_snapshot_error: '',
    last_snapshot_url: '',
    next_snapshot_start: '',
    snapshot_start: '',
    snapshot_url: '',
  };
}

/** File name time: sortable, no colons (2026-11-27T02-57-47.123Z). */
function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/:/g, '-');
}

/** The scheduled snapshots of one core. */
export class AutoSnapshots {
  private readonly storage: Storage;
  private timer: NodeJS.Timeout | null = null;
  private readonly next = new Map<string, number>();
  private readonly status = new Map<string, AutoSnapshotStatus>();
  private running = false;

  constructor(private readonly core: AutoSnapshotHost) {
    this.storage = prefixed(core.barrier, 'sys/snapshot-auto/config/');
    core.events.on('after-unseal', () => this.start());
    core.events.on('before-seal', () => this.stop());
  }

  private start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.next.clear();
  }

  /** Names of the configs. */
  list(): Promise<string[]> {
    return this.storage.list('');
  }
  get(name: string): Promise<AutoSnapshotConfig | null> {
    return getJSON<AutoSnapshotConfig>(this.storage, name);
  }
  async put(name: string, cfg: AutoSnapshotConfig): Promise<void> {
    await putJSON(this.storage, name, cfg);
    this.next.delete(name);
  }
  async delete(name: string): Promise<void> {
    await this.storage.delete(name);
    this.next.delete(name);
    this.status.delete(name);
  }
  statusOf(name: string): AutoSnapshotStatus {
    const s = this.status.get(name) ?? emptyStatus();
    const n = this.next.get(name);
    return { ...s, next_snapshot_start: n ? new Date(n).toISOString() : s.next_snapshot_start };
  }

  /** One look: take the snapshots that are due (writing node only; one tick at a time). */
  private async tick(): Promise<void> {
    if (this.running || this.core.isSealed() || this.core.isStandby()) return;
    this.running = true;
    try {
      const now = this.core.clock.now();
      const names = await this.list();
      for (const name of [...this.next.keys()]) if (!names.includes(name)) this.next.delete(name);
      for (const name of names) {
        const cfg = await this.get(name);
        if (!cfg) continue;
        const due = this.next.get(name);
        if (due === undefined) {
          this.next.set(name, now + cfg.interval * 1000);
          continue;
        }
        if (now < due) continue;
        await this.take(name, cfg);
        this.next.set(name, this.core.clock.now() + cfg.interval * 1000);
      }
    } catch (e) {
      this.core.logger.warn('scheduled snapshot check failed', { error: (e as Error)?.message });
    } finally {
      this.running = false;
    }
  }

  /** Take one snapshot for `name` now, then remove files beyond `retain`. */
  async take(name: string, cfg: AutoSnapshotConfig): Promise<void> {
    const st = this.status.get(name) ?? emptyStatus();
    const started = this.core.clock.now();
    const file = join(cfg.path_prefix, `${cfg.file_prefix}-${stamp(started)}.snap`);
    st.snapshot_start = new Date(started).toISOString();
    st.snapshot_url = `file://${file}`;
    this.status.set(name, st);
    try {
      const snap = await this.core.snapshots.save();
      await mkdir(cfg.path_prefix, { recursive: true, mode: 0o700 });
      const mine = await this.files(cfg);
      if (cfg.local_max_space > 0) {
        // The oldest files beyond retain - 1 go after this one is written; count what stays.
        const staying = mine.slice(Math.max(0, mine.length - (cfg.retain - 1)));
        let kept = 0;
        for (const f of staying) kept += (await stat(join(cfg.path_prefix, f))).size;
        if (kept + snap.length > cfg.local_max_space)
          throw new Error(
            `not enough space: the snapshot needs ${snap.length} bytes, ${kept} of local_max_space ${cfg.local_max_space} are in use`,
          );
      }
      const tmp = `${file}.partial`;
      await writeFile(tmp, snap, { mode: 0o600 });
      await rename(tmp, file);
      const all = await this.files(cfg);
      for (const old of all.slice(0, Math.max(0, all.length - cfg.retain)))
        await rm(join(cfg.path_prefix, old), { force: true });
      st.consecutive_errors = 0;
      st.last_snapshot_error = '';
      st.last_snapshot_url = st.snapshot_url;
      this.core.logger.info('scheduled snapshot taken', { name, file, bytes: snap.length });
    } catch (e) {
      st.consecutive_errors++;
      st.last_snapshot_error = (e as Error).message;
      this.core.logger.warn('scheduled snapshot failed', { name, error: (e as Error).message });
    } finally {
      st.last_snapshot_start = st.snapshot_start;
      st.last_snapshot_end = new Date(this.core.clock.now()).toISOString();
      st.snapshot_start = '';
      st.snapshot_url = '';
    }
  }

  /** This config's snapshot files in `path_prefix`, oldest first. */
  private async files(cfg: AutoSnapshotConfig): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(cfg.path_prefix);
    } catch {
      return [];
    }
    return names.filter((n) => n.startsWith(`${cfg.file_prefix}-`) && n.endsWith('.snap')).sort();
  }
}
