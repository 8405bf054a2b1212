/**
 * The sys/sync routes (paths relative to sys/sync/; spec 4.4, reference sync-wire.md 1.2).
 * Handlers are thin: coerced input -> SyncService -> reply.
 */
import { f, type Fields } from '../framework/fields.js';
import { routesFor, type AnyRoute, type Reply } from '../framework/route.js';
import { DESTINATION_TYPES } from './destinations/index.js';
import type { SyncEngine } from './sync-engine.js';
import { ALL_TYPE_IDS, isAlias, requireType } from './type-aliases.js';

const route = routesFor<SyncEngine>();

/** Options every destination type takes (reference 1.5.1). */
export const OPTION_FIELDS = {
  secret_name_template: f.string('Template of external secret names (Go template subset; "" restores the default)'),
  granularity: f
    .string('secret-path: the whole secret as one JSON value; secret-key: one external secret per key')
    .oneOf('secret-path', 'secret-key'),
  custom_tags: f.stringMap('Tags/labels added to each external secret (provider-a-sm, provider-b-kv, provider-c-sm)'),
  allowed_ipv4_addresses: f.strings('Extra IPv4 CIDRs the connector may reach (e.g. 127.0.0.1/32)'),
  allowed_ipv6_addresses: f.strings('Extra IPv6 CIDRs the connector may reach'),
  allowed_ports: f.ints('Extra ports besides 80 and 443'),
  disable_strict_networking: f.bool('Turn the network guard off entirely'),
} satisfies Fields;

const DELETE_FIELDS = {
  purge: f.bool('DELETE: unsync every associated secret, remove the associations, then delete'),
  force_delete: f.bool('DELETE: delete at once even with associations; external secrets are left behind'),
} satisfies Fields;

/** The neutral type of a path's type id (keyhold's or Vault's spelling; type-aliases.ts). */
const checkType = requireType;

/** An answer about a destination, shown under the type id the caller used (`type`, `store_type`). */
function shownAs(id: string, data: Record<string, unknown>): Record<string, unknown> {
  if (!isAlias(id)) return data;
  const out: Record<string, unknown> = { ...data };
  if ('type' in out) out.type = id;
  if ('store_type' in out) out.store_type = id;
  return out;
}

function inputOf(data: Record<string, unknown>, fields: Fields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(fields)) if (data[k] !== undefined) out[k] = data[k];
  return out;
}

/**
 * One create/read/update/patch/delete route per destination type id (keyhold's and Vault's), with
 * that type's fields; answers carry the id of the path.
 */
function destinationRoute(id: string): AnyRoute {
  const type = requireType(id);
  const def = DESTINATION_TYPES[type];
  const fields = { name: f.name('Destination name'), ...def.fields, ...OPTION_FIELDS, ...DELETE_FIELDS };
  const alias = isAlias(id) ? ` (Vault's type id for ${type})` : '';
  // Create, update and patch are one write (patch merges into the stored destination).
  const write = async (
    engine: SyncEngine,
    data: Record<string, unknown> & { name: string },
    mode: 'post' | 'patch',
  ) => ({
    data: shownAs(
      id,
      await engine.service.writeDestination(
        type,
        data.name,
        inputOf(data, { ...def.fields, ...OPTION_FIELDS }),
        mode,
        id,
      ),
    ),
  });
  return route({
    path: `destinations/${id}/:name`,
    summary: `Create, read, update or delete a ${def.provider} destination${alias}`,
    fields,
    exists: ({ engine, params }) => engine.service.destinationExists(type, params.name!),
    operations: {
      read: async ({ engine, data }) => {
        const v = await engine.service.readDestination(type, data.name);
        return v ? { data: shownAs(id, v) } : undefined;
      },
      create: async ({ engine, data }) => write(engine, data, 'post'),
      update: async ({ engine, data }) => write(engine, data, 'post'),
      patch: async ({ engine, data }) => write(engine, data, 'patch'),
      delete: async ({ engine, data }) => {
        const v = await engine.service.deleteDestination(type, data.name, {
          purge: data.purge ?? false,
          force: data.force_delete ?? false,
        });
        return v ? { data: shownAs(id, v) } : undefined;
      },
    },
  });
}

const assocFields = {
  type: f.name('Destination type'),
  name: f.name('Destination name'),
};

/**
 * An association map answer, with its JSON when the service kept it (Reply.dataJson); under one of
 * Vault's type ids (`id`) the map is shown with that id and serialized by the router.
 */
function answer(engine: SyncEngine, data: Record<string, unknown>, id: string): Reply {
  if (isAlias(id)) return { data: shownAs(id, data) };
  const dataJson = engine.service.jsonOf(data);
  return dataJson === undefined ? { data } : { data, dataJson };
}

/** Every operation of a route first checks the activation flag (see activation.ts). */
function gated(r: AnyRoute): AnyRoute {
  for (const [op, handler] of Object.entries(r.operations)) {
    if (!handler) continue;
    (r.operations as Record<string, unknown>)[op] = async (req: { engine: SyncEngine }) => {
      await req.engine.requireActivated();
      return (handler as (q: unknown) => unknown)(req);
    };
  }
  return r;
}

/** Routes of the sync module. */
export const syncRoutes: AnyRoute[] = [
  route({
    path: 'config',
    summary: 'Global secret-sync configuration: disabled (emergency brake), queue_capacity',
    fields: {
      disabled: f.bool('While true nothing is sent; operations wait in the queue as PENDING'),
      queue_capacity: f.int('Upper bound on queued sync operations').min(1),
    },
    operations: {
      read: async ({ engine }) => ({ data: { ...(await engine.service.config()) } }),
      update: async ({ engine, data }) => ({
        data: {
          ...(await engine.service.updateConfig({ disabled: data.disabled, queue_capacity: data.queue_capacity })),
        },
      }),
      patch: async ({ engine, data }) => ({
        data: {
          ...(await engine.service.updateConfig({ disabled: data.disabled, queue_capacity: data.queue_capacity })),
        },
      }),
      delete: async ({ engine }) => {
        await engine.service.resetConfig();
      },
    },
  }),
  route({
    path: 'destinations',
    summary: 'List destination names grouped by type',
    fields: {},
    operations: {
      list: async ({ engine }) => {
        const v = await engine.service.listDestinations();
        return v ? { data: v } : undefined;
      },
    },
  }),
  ...ALL_TYPE_IDS.map(destinationRoute),
  route({
    path: 'destinations/:type',
    summary: 'List destination names of one type',
    fields: { type: f.name('Destination type') },
    operations: {
      list: async ({ engine, data }) => {
        const v = await engine.service.listDestinationsOfType(checkType(data.type));
        return v ? { data: v } : undefined;
      },
    },
  }),
  route({
    path: 'destinations/:type/:name',
    summary: 'Destinations of unknown types (answers 400 naming the supported types)',
    fields: assocFields,
    operations: {
      read: ({ data }) => void checkType(data.type),
      update: ({ data }) => void checkType(data.type),
      patch: ({ data }) => void checkType(data.type),
      delete: ({ data }) => void checkType(data.type),
    },
  }),
  route({
    path: 'destinations/:type/:name/associations',
    summary: 'Associations of a destination with the latest sync status of each',
    fields: assocFields,
    operations: {
      read: async ({ engine, data }) =>
        answer(engine, await engine.service.associations(checkType(data.type), data.name), data.type),
    },
  }),
  route({
    path: 'destinations/:type/:name/associations/set',
    summary: 'Associate a KV v2 secret with the destination (or refresh the association); triggers a sync',
    fields: {
      ...assocFields,
      mount: f.string('Mount path of the KV v2 engine holding the secret').required(),
      secret_name: f.string('Path of the secret within the mount').required(),
    },
    operations: {
      update: async ({ engine, data, allowed }) =>
        answer(
          engine,
          await engine.service.setAssociation(checkType(data.type), data.name, data.mount, data.secret_name, (p) =>
            allowed('read', p),
          ),
          data.type,
        ),
    },
  }),
  route({
    // The path parameter is not called `name` here: the body's `name` is the secret (spec 4.4).
    path: 'destinations/:type/:destination/associations/remove',
    summary: 'Remove an association; unsyncs (deletes the external secret); succeeds when already absent',
    fields: {
      type: f.name('Destination type'),
      destination: f.name('Destination name'),
      mount: f.string('Mount path of the KV v2 engine holding the secret').required(),
      secret_name: f.string('Path of the secret within the mount'),
      name: f.string('Path of the secret within the mount (the interface document names the field so)'),
    },
    rules: [{ kind: 'oneOf', fields: ['secret_name', 'name'] }],
    operations: {
      update: async ({ engine, data }) =>
        answer(
          engine,
          await engine.service.removeAssociation(
            checkType(data.type),
            data.destination,
            data.mount,
            (data.secret_name ?? data.name)!,
          ),
          data.type,
        ),
    },
  }),
  route({
    path: 'github-apps',
    summary: 'List the GitHub Apps registered for repohost destinations',
    fields: {},
    operations: {
      list: async ({ engine }) => {
        const v = await engine.service.listGithubApps();
        return v ? { data: v } : undefined;
      },
    },
  }),
  route({
    path: 'github-apps/:name',
    summary: 'Register, read or remove a GitHub App (app id + private key) that repohost destinations authenticate as',
    fields: {
      name: f.name('App name (referenced by a destination as app_name)'),
      app_id: f.int('Numeric app id from the GitHub App settings; fixed once set').min(1),
      private_key: f.string("The app's RSA private key (PEM, as GitHub generates it)").sensitive(),
    },
    exists: async ({ engine, params }) => (await engine.service.readGithubApp(params.name!)) !== null,
    operations: {
      read: async ({ engine, data }) => {
        const v = await engine.service.readGithubApp(data.name);
        return v ? { data: v } : undefined;
      },
      create: async ({ engine, data }) => ({
        data: await engine.service.writeGithubApp(data.name, { app_id: data.app_id, private_key: data.private_key }),
      }),
      update: async ({ engine, data }) => ({
        data: await engine.service.writeGithubApp(data.name, { app_id: data.app_id, private_key: data.private_key }),
      }),
      delete: async ({ engine, data }) => {
        await engine.service.deleteGithubApp(data.name);
      },
    },
  }),
  route({
    path: 'associations',
    summary: 'List every secret that has at least one association',
    fields: {},
    operations: {
      list: async ({ engine }) => {
        const v = await engine.service.listAssociations();
        return v ? { data: v } : undefined;
      },
    },
  }),
  route({
    path: 'associations/destinations',
    summary: 'Destinations of one secret (query form; works when mount or secret contain "/")',
    fields: {
      mount: f.string('Mount path').required(),
      secret_name: f.string('Secret path').required(),
    },
    operations: {
      read: async ({ engine, data }) => {
        const v = await engine.service.destinationsOf(data.mount, data.secret_name);
        return v ? { data: v } : undefined;
      },
    },
  }),
  route({
    path: 'associations/:mount/*secret_name',
    summary: 'Destinations of one secret (path form)',
    fields: { mount: f.name('Mount path'), secret_name: f.name('Secret path') },
    operations: {
      read: async ({ engine, data }) => {
        const v = await engine.service.destinationsOf(data.mount, data.secret_name);
        return v ? { data: v } : undefined;
      },
    },
  }),
].map(gated);
