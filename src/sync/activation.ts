/**
 * `sys/activation-flags` and `sys/activation-flags/secrets-sync/activate`, as Vault has them
 * (reference sync-wire.md 1.1: a one-time activation of the feature; the Vault UI reads the flags
 * and offers the opt-in, Terraform and scripts `vault write -f` the activate path). Answers carry
 * `activated` and `unactivated` lists. These routes live under `sys/` (the sys module mounts them);
 * the flag itself is stored with secret sync's records.
 *
 * Gate: with `KEYHOLD_SYNC_REQUIRE_ACTIVATION=true` in the daemon's environment every sys/sync
 * endpoint answers 400 until the feature is activated, as Vault does. keyhold counts no clients for
 * licensing, so by default the feature is usable at once and reads as activated; activating is then
 * accepted (and remembered) so clients that activate first work unchanged.
 *
 * This file holds the flag and the gate; the routes are in activation-routes.ts.
 */

/** The feature flag of secret sync. */
export const SECRETS_SYNC_FLAG = 'secrets-sync';

/** Vault's error when a sync endpoint is used before activation (wording of our own; Vault's is not published). */
export const NOT_ACTIVATED = 'secrets sync is not activated; activate it once with a write to sys/activation-flags/secrets-sync/activate';

/** Whether the daemon requires activation before sys/sync answers. */
export function activationRequired(env: NodeJS.ProcessEnv): boolean {
  return /^(1|true|yes)$/i.test(env.KEYHOLD_SYNC_REQUIRE_ACTIVATION ?? '');
}
