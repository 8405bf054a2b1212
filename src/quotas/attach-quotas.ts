/** Attach the quota manager to a core: records load after unseal and are forgotten before seal. */
import type { LifecycleEvents } from '../framework/events.js';
import { prefixed, type Storage } from '../storage/backend.js';
import { QuotaManager } from './quota-manager.js';

/** What `attachQuotas` needs from the core. */
export interface QuotaHost {
  readonly barrier: Storage;
  readonly clock: { now(): number };
  /** Lifecycle events: loaded after unseal, forgotten before seal. */
  readonly events: Pick<LifecycleEvents, 'on'>;
}

/** Barrier prefix of quota records (a change under it reloads the quotas on every node). */
export const QUOTA_STORAGE_PREFIX = 'sys/quotas/';

/** Build the manager for a core; assign the result to `core.quotas`. */
export function attachQuotas(core: QuotaHost): QuotaManager {
  const quotas = new QuotaManager(prefixed(core.barrier, QUOTA_STORAGE_PREFIX), () => core.clock.now());
  core.events.on('after-unseal', () => quotas.reload());
  core.events.on('before-seal', async () => quotas.clear());
  return quotas;
}
