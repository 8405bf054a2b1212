/** Live state of one transit mount: key store, auto-rotation scheduler, BYOK wrapping key, managed keys. */
import type { EngineEnv } from '../../framework/context.js';
import { TransitKeyStore } from './keyring/key-store.js';
import { AutoRotator } from './keyring/auto-rotate.js';
import { WrappingKey } from './keyring/byok.js';
import type { ManagedKeyAccess, TransitState } from './keyring/types.js';

/** Stored `config/keys` record. */
export interface KeysConfig {
  disable_upsert: boolean;
}

/** Live state of one transit mount. */
export class TransitEngine implements TransitState {
  /** The mount's keys (per-key locks, cache sized by `config/cache` at start-up/reload). */
  readonly keys: TransitKeyStore;
  /** The auto-rotation scheduler. */
  readonly rotator: AutoRotator;
  /** The mount's BYOK wrapping key (RSA-4096, created on first use). */
  readonly wrapping: WrappingKey;
  /** sys/managed-keys as this mount may use them. */
  readonly managed?: ManagedKeyAccess;

  constructor(
    readonly env: EngineEnv,
    cacheSize = 0,
  ) {
    this.keys = new TransitKeyStore(env.storage, env.clock, env.logger, cacheSize);
    this.rotator = new AutoRotator(this.keys, env.clock, env.logger);
    this.wrapping = new WrappingKey(env.storage);
    const reg = env.core.managedKeys;
    if (reg) {
      this.managed = {
        resolve: async (ref) => (await reg.resolve(ref, env.mount)).uuid,
        // The mount's permission (any_mount or allowed_managed_keys) is checked on every use, not only
        // at create: a tune that drops the key takes effect at once (reference 2.1 note on UUIDs).
        key: (uuid, usage) => reg.keyFor(uuid, env.mount, usage),
        nameOf: async (uuid) => (await reg.byUuid(uuid))?.name ?? '',
        markUsed: (uuid, name) => reg.markUsed(uuid, env.mount, name),
        unmarkUsed: (uuid, name) => reg.unmarkUsed(uuid, env.mount, name),
      };
    }
  }

  /** `config/keys` disable_upsert. */
  async upsertDisabled(): Promise<boolean> {
    return (await this.keys.readConfig<KeysConfig>('keys'))?.disable_upsert ?? false;
  }

  /** Another node changed `key` (a standby's cache invalidation): drop the cached key it belongs to. */
  invalidate(key: string): void {
    const m = /^(?:policy|versions)\/([^/]+)/.exec(key);
    if (!m) return;
    this.keys.forget(m[1]!);
    // Load the new state now, before the next request needs it (a rotation seen on a standby is then
    // used by the first encrypt after it); a load racing a later change loads again (generation).
    this.keys.get(m[1]!).catch(() => {});
  }

  /** Stop the scheduler. */
  async close(): Promise<void> {
    await this.rotator.stop();
  }
}
