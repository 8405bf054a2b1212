/** sys/sync/config (reference sync-wire.md 1.3): stored, and applied to the worker at once. */
import type { SyncStore } from './store.js';
import { DEFAULT_SYNC_CONFIG, type SyncConfig } from './types.js';
import type { Syncer } from './worker.js';

/** Read, merge and reset the global sync configuration. */
export class ConfigService {
  constructor(
    private readonly store: SyncStore,
    private readonly syncer: Syncer,
  ) {}

  /** sys/sync/config. */
  read(): Promise<SyncConfig> {
    return this.store.config();
  }

  /** Merge changes into sys/sync/config and apply them. */
  async update(changes: Partial<SyncConfig>): Promise<SyncConfig> {
    const cur = await this.store.config();
    const next: SyncConfig = { ...cur };
    if (changes.disabled !== undefined) next.disabled = changes.disabled;
    if (changes.queue_capacity !== undefined) next.queue_capacity = changes.queue_capacity;
    await this.store.putConfig(next);
    this.syncer.configure(next);
    return next;
  }

  /** Reset sys/sync/config to defaults. */
  async reset(): Promise<void> {
    await this.store.deleteConfig();
    this.syncer.configure(DEFAULT_SYNC_CONFIG);
  }
}
