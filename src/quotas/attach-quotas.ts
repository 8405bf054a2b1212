/** Attach the quota manager to a core: records load after unseal and are forgotten before seal. */
import type { Logger } from '../framework/context.js';
import { prefixed, type Storage } from '../storage/backend.js';
import { QuotaManager } from './quota-manager.js';

/** What `attachQuotas` needs from the core. */
export interface QuotaHost {
  readonly barrier: Storage;
  readonly logger: Logger;
  readonly clock: { now(): number };
  readonly afterUnseal: Array<() => Promise<void>>;
  readonly beforeSeal: Array<() => Promise<void>>;
}

/** Barrier prefix of quota records (a change under it reloads the quotas on every node). */
export const QUOTA_STORAGE_PREFIX = 'sys/quotas/';

/** Build the manager for a core; assign the result to `core.quotas`. */
export function attachQuotas(core: QuotaHost): QuotaManager {
  const quotas = new QuotaManager(prefixed(core.barrier, QUOTA_STORAGE_PREFIX), core.logger, () => core.clock.now());
  core.afterUnseal.push(() => quotas.reload());
  core.beforeSeal.push(async () => quotas.clear());
  return quotas;
}
