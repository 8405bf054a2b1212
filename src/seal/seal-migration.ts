/**
 * Seal migration (`keyhold operator unseal -migrate`; Vault's migrateSeal in vault/core.go): moves the
 * master key and the unseal or recovery key from the seal storage was sealed with to the configured
 * one. The seal manager checks the old seal's keys first and takes the new config when this is done.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from '../framework/context.js';
import type { Backend } from '../storage/backend.js';
import type { Keychain } from './keychain.js';
import {
  BARRIER_KEYS_PATH,
  RECOVERY_KEY_PATH,
  barrierShares,
  forgetPreviousKeyring,
  openKeyring,
  rewrapKeyring,
  writeBlob,
  writeSealConfig,
  type SealBlob,
  type SealConfig,
} from './seal.js';
import type { SealWrapper } from './wrapper.js';

const SHAMIR = 'shamir';

/** What a migration works with: the daemon's storage and keychain, and how a key is wrapped by a seal (503 when unreachable). */
export interface MigrationContext {
  backend: Backend;
  keychain: Keychain;
  logger: Logger;
  encryptWith: (w: SealWrapper, key: Buffer) => Promise<SealBlob>;
}

/**
 * Seal migration after the old seal's keys were verified (Vault's migrateSeal): returns the master
 * key to unseal with and the new seal config (already stored). shamir -> auto: the unseal key becomes
 * the recovery key and a fresh master key goes under the new seal; auto -> shamir: the recovery key
 * becomes the unseal key; auto -> auto: both keys are re-wrapped by the new seal.
 */
export async function migrateSeal(
  ctx: MigrationContext,
  cfg: SealConfig,
  from: string,
  to: SealWrapper | null,
  unsealKey: Buffer,
  master: Buffer,
): Promise<{ master: Buffer; config: SealConfig }> {
  const barrierKey = await openKeyring(ctx.backend, master);
  try {
    if (from === SHAMIR && to) {
      const fresh = randomBytes(32);
      await writeBlob(ctx.backend, BARRIER_KEYS_PATH, await ctx.encryptWith(to, fresh));
      await writeBlob(ctx.backend, RECOVERY_KEY_PATH, await ctx.encryptWith(to, unsealKey));
      await rewrapKeyring(ctx.backend, barrierKey, fresh);
      const oldAccount = cfg.keychain_account;
      const next: SealConfig = {
        ...cfg,
        type: to.type,
        secret_shares: 1,
        secret_threshold: 1,
        recovery: barrierShares(cfg),
        keychain_account: null,
      };
      await writeSealConfig(ctx.backend, next);
      await forgetPreviousKeyring(ctx.backend);
      if (oldAccount) await ctx.keychain.delete(oldAccount).catch(() => {});
      master.fill(0);
      return { master: fresh, config: next };
    }
    if (from !== SHAMIR && !to) {
      const fresh = Buffer.from(unsealKey);
      await rewrapKeyring(ctx.backend, barrierKey, fresh);
      const account = await keepInKeychain(ctx, fresh);
      const next: SealConfig = {
        ...cfg,
        type: SHAMIR,
        ...(cfg.recovery ?? { secret_shares: 1, secret_threshold: 1 }),
        recovery: null,
        keychain_account: account,
      };
      await writeSealConfig(ctx.backend, next);
      await forgetPreviousKeyring(ctx.backend);
      await ctx.backend.delete(BARRIER_KEYS_PATH);
      await ctx.backend.delete(RECOVERY_KEY_PATH);
      master.fill(0);
      return { master: fresh, config: next };
    }
    // auto -> auto
    await writeBlob(ctx.backend, BARRIER_KEYS_PATH, await ctx.encryptWith(to!, master));
    await writeBlob(ctx.backend, RECOVERY_KEY_PATH, await ctx.encryptWith(to!, unsealKey));
    const next: SealConfig = { ...cfg, type: to!.type };
    await writeSealConfig(ctx.backend, next);
    return { master, config: next };
  } finally {
    barrierKey.fill(0);
  }
}

/** Keychain entry for a (new) master key when the daemon uses a keychain; null when it cannot be written. */
async function keepInKeychain(ctx: MigrationContext, master: Buffer): Promise<string | null> {
  if (ctx.keychain.describe() === 'none') return null;
  const account = `storage-${randomUUID()}`;
  try {
    await ctx.keychain.set(account, master);
    return account;
  } catch (e) {
    ctx.logger.warn('could not store master key in keychain; use the unseal key(s) to unseal', {
      reason: (e as Error).message,
    });
    return null;
  }
}
