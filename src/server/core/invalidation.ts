/**
 * Another daemon on shared storage changed a record (the backend's change feed): drop what this
 * daemon cached of it. The mount table, policies, tokens, identities and managed keys are handled
 * here; engine records go to the owning engine (core/mount-table.ts).
 */
import type { IdentityStore } from '../../auth/identity.js';
import type { PolicyStore } from '../../auth/policies.js';
import type { TokenStore } from '../../auth/tokens.js';
import type { ManagedKeyRegistry } from '../../kms/managed-keys.js';
import type { SealManager } from '../../seal/seal-manager.js';
import type { Barrier } from '../../storage/barrier.js';
import type { Invalidator, SealView } from '../contracts.js';
import type { Access } from './access.js';
import { MOUNT_TABLE_KEYS, type MountTable } from './mount-table.js';
import { QUOTA_STORAGE_PREFIX } from '../../quotas/attach-quotas.js';
import { CORS_KEY } from '../cors.js';
import { TERMS_PATH } from '../../storage/keyring-rotation.js';

/** What invalidation reaches. */
export interface InvalidationDeps {
  /** The keyring of barrier key terms (issue 27): re-read when another node rotates. */
  barrierKeys: { reload(): Promise<void> };
  barrier: Barrier;
  sealer: Pick<SealManager, 'refresh'>;
  seal: SealView;
  mounts: Pick<MountTable, 'restart' | 'reloadTable' | 'invalidate'>;
  access: Pick<Access, 'invalidateAcls'>;
  tokens: TokenStore;
  policies: PolicyStore;
  identity: IdentityStore;
  managedKeys: ManagedKeyRegistry;
  /** Rate-limit quotas and the CORS config (issue 28): reloaded when another node changes them. */
  quotas: { reload(): Promise<void> };
  cors: { reload(): Promise<void> };
}

/** The caches of one daemon, kept true to shared storage. */
export class CacheInvalidation implements Invalidator {
  constructor(private readonly deps: InvalidationDeps) {}

  /**
   * Another process changed the record at `key` (a barrier path) in shared storage: drop what this
   * daemon cached of it. Mount table, policies and tokens are handled here; engine records go to the
   * engine's optional `invalidate(key)` with the key relative to its mount's storage.
   */
  async invalidate(key: string): Promise<void> {
    const { barrier, sealer, mounts, identity, policies, tokens, managedKeys } = this.deps;
    // First the barrier's record cache, so whatever reloads below reads the new record.
    if (key === '') barrier.clearCache();
    else barrier.forget(key);
    if (key === 'core/seal-config') return sealer.refresh();
    if (this.deps.seal.isSealed()) return;
    // Another node rotated the barrier key (issue 27): new writes here use the new term too.
    if (key === TERMS_PATH) return this.deps.barrierKeys.reload();
    // '' = changes may have been missed (the feed reconnected): every cache starts over.
    if (key === '') {
      await this.deps.quotas.reload();
      await this.deps.cors.reload();
      return this.reloadAll();
    }
    if (MOUNT_TABLE_KEYS.includes(key)) return mounts.reloadTable();
    if (key.startsWith('sys/identity/')) {
      identity.clear();
      return;
    }
    if (key.startsWith('sys/policy/')) {
      policies.forget(key.slice('sys/policy/'.length));
      this.deps.access.invalidateAcls();
      return;
    }
    if (key.startsWith('sys/token/id/')) {
      tokens.forget(key.slice('sys/token/id/'.length));
      return;
    }
    if (key.startsWith(QUOTA_STORAGE_PREFIX)) return this.deps.quotas.reload();
    if (key === CORS_KEY) return this.deps.cors.reload();
    if (key.startsWith('sys/managed-keys/config/')) {
      managedKeys.invalidate();
      return;
    }
    await mounts.invalidate(key);
  }

  /** Drop every cache and recreate every engine instance (role change, or changes possibly missed). */
  async reloadAll(): Promise<void> {
    if (this.deps.seal.isSealed()) return;
    this.deps.tokens.forgetAll();
    this.deps.policies.clear();
    this.deps.access.invalidateAcls();
    await this.deps.mounts.restart();
  }
}
