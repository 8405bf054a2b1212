/** The sys routes of activation flags (`sys/activation-flags`, `.../secrets-sync/activate`); see activation.ts. */
import { invalid, notFound } from '../framework/errors.js';
import { f } from '../framework/fields.js';
import { routesFor, type AnyRoute } from '../framework/route.js';
import { SECRETS_SYNC_FLAG } from './activation.js';
import type { SyncEngine } from './sync-engine.js';

/** The core as the activation routes see it (the sys module's engine is the core). */
interface CoreLike {
  engineOf?<T>(mountPath: string): T | undefined;
}

function syncOf(core: CoreLike): SyncEngine {
  const b = core.engineOf?.<SyncEngine>('sys/sync/');
  if (!b) throw notFound('secret sync is not available (the vault is sealed or sync is not mounted)');
  return b;
}

async function flags(b: SyncEngine): Promise<Record<string, string[]>> {
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
        if (data.feature !== SECRETS_SYNC_FLAG) throw invalid('feature', `unknown feature "${data.feature.slice(0, 40)}"; known: ${SECRETS_SYNC_FLAG}`);
        const b = syncOf(engine);
        await b.activate();
        return { data: await flags(b) };
      },
    },
  }),
];
