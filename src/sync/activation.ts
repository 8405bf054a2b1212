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
 */
import { invalid, notFound } from '../framework/errors.js';
import { f } from '../framework/fields.js';
import { routesFor, type AnyRoute } from '../framework/route.js';

/** The feature flag of secret sync. */
export const SECRETS_SYNC_FLAG = 'secrets-sync';

/** Vault's error when a sync endpoint is used before activation (wording of our own; Vault's is not published). */
export const NOT_ACTIVATED =
  'secrets sync is not activated; activate it once with a write to sys/activation-flags/secrets-sync/activate';

/** Whether the daemon requires activation before sys/sync answers. */
export function activationRequired(env: NodeJS.ProcessEnv): boolean {
  return /^(1|true|yes)$/i.test(env.KEYHOLD_SYNC_REQUIRE_ACTIVATION ?? '');
}

/** The sys module's parts as the activation routes see them (the mount table finds sync's instance). */
interface CoreLike {
  mounts: { engineOf<T>(mountPath: string): T | undefined };
}

/** The activation flag as secret sync keeps it (SyncEngine). */
export interface ActivationState {
  activated(): Promise<boolean>;
  activate(): Promise<void>;
}

function syncOf(core: CoreLike): ActivationState {
  const b = core.mounts.engineOf<ActivationState>('sys/sync/');
  if (!b) throw notFound('secret sync is not available (the vault is sealed or sync is not mounted)');
  return b;
}

async function flags(b: ActivationState): Promise<Record<string, string[]>> {
  const on = await b.activated();
  return { activated: on ? [SECRETS_SYNC_FLAG] : [], unactivated: on ? [] : [SECRETS_SYNC_FLAG] };
}

const route = routesFor<CoreLike>();

/** The sys routes of activation flags (mounted by the sys module). */
export const activationRoutes: AnyRoute[] = [
  route({
    path: 'activation-flags',
    summary: 'Feature activation flags: activated and unactivated features',
    fields: {},
    operations: {
      read: async ({ engine }) => ({ data: await flags(syncOf(engine)) }),
    },
  }),
  route({
    path: 'activation-flags/:feature/activate',
    summary: 'Activate a feature (secrets-sync); idempotent',
    fields: { feature: f.name(`Feature to activate: ${SECRETS_SYNC_FLAG}`) },
    operations: {
      update: async ({ engine, data }) => {
        if (data.feature !== SECRETS_SYNC_FLAG)
          throw invalid('feature', `unknown feature "${data.feature.slice(0, 40)}"; known: ${SECRETS_SYNC_FLAG}`);
        const b = syncOf(engine);
        await b.activate();
        return { data: await flags(b) };
      },
    },
  }),
];
