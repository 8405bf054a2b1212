/**
 * KV v2 route table (Vault's vault-plugin-secrets-kv paths). Handlers are thin: coerce -> KvEngine -> Vault's
 * response shape. Deleted or destroyed versions answer 404 with their metadata in a normal envelope, and
 * v1-style paths answer 404 with Vault's warning, as the plugin does.
 */
import { invalid } from '../../framework/errors.js';
import { f, parseDuration } from '../../framework/fields.js';
import type { RequestContext } from '../../framework/context.js';
import { routesFor, type AnyRoute, type Reply } from '../../framework/route.js';
import type { KvEngine } from './kv-engine.js';
import type { MetadataChanges } from './kv-metadata.js';
import { KV_VERB, MESSAGES, ROOT_WORDS, invalidPathWarning, parseCustomMetadata } from './kv-rules.js';

const defineRoute = routesFor<KvEngine>();

const pathField = f.string('Location of the secret (may contain slashes)');

/** `delete_version_after` of the engine config: a Go duration that may be negative (disables). */
function signedDuration(name: string, raw: unknown): number {
  if (typeof raw === 'number' && Number.isFinite(raw)) return Math.trunc(raw);
  if (typeof raw === 'string' && raw.trim().startsWith('-')) return -parseDuration(name, raw.trim().slice(1));
  return parseDuration(name, raw);
}

function rootWarning(): Reply {
  return { status: 404, data: null, warnings: [MESSAGES.rootNotSupported] };
}

function metadataChanges(
  d: {
    max_versions?: number;
    cas_required?: boolean;
    delete_version_after?: number;
    custom_metadata?: Record<string, unknown>;
  },
  patch: boolean,
): MetadataChanges {
  return {
    maxVersions: d.max_versions,
    casRequired: d.cas_required,
    deleteVersionAfter: d.delete_version_after,
    customMetadata: d.custom_metadata === undefined ? undefined : parseCustomMetadata(d.custom_metadata, patch),
  };
}

const configRoute = defineRoute({
  path: 'config',
  summary: 'Read or set the engine-wide KV settings',
  fields: {
    max_versions: f.int('Versions kept per secret (0 = 10)').min(0),
    cas_required: f.bool('Require check-and-set (options.cas) on every write'),
    delete_version_after: f.any(
      'Soft-delete versions this long after writing (Go duration; "0s" clears, negative disables)',
    ),
  },
  operations: {
    read: async ({ engine }) => ({ data: await engine.configView() }),
    update: async ({ engine, data }) => {
      const dva =
        data.delete_version_after === undefined || data.delete_version_after === null
          ? undefined
          : signedDuration('delete_version_after', data.delete_version_after);
      await engine.setConfig({
        maxVersions: data.max_versions,
        casRequired: data.cas_required,
        deleteVersionAfter: dva,
      });
    },
  },
});

const dataFields = {
  path: pathField,
  version: f.int('Version to read (0 or absent = current)'),
  data: f.map('The secret: a JSON object of keys and values').sensitive(),
  options: f.map('Write options; "cas": check-and-set version (0 = only if the secret does not exist)'),
};

const dataRoute = defineRoute({
  path: 'data/*path',
  summary: 'Write, patch, read and soft-delete versions of a secret',
  fields: dataFields,
  exists: ({ engine, data }) => engine.exists(data.path ?? ''),
  operations: {
    read: async ({ engine, data }) => {
      const r = await engine.readData(data.path!, data.version ?? 0);
      if (!r) return;
      if (r.gone) return { status: 404, data: { data: null, metadata: r.metadata } };
      return { data: { data: r.data, metadata: r.metadata } };
    },
    update: async ({ engine, data }) => {
      if (data.data === undefined) throw invalid(MESSAGES.noData);
      const r = await engine.writeData(data.path!, data.data, data.options);
      return { data: { ...r.metadata }, warnings: r.warnings };
    },
    patch: async ({ engine, data }) => {
      if (data.data === undefined) throw invalid(MESSAGES.noData);
      const r = await engine.patchData(data.path!, data.data, data.options);
      if (r.kind === 'missing') return { status: 404, data: null };
      if (r.kind === 'gone') return { status: 404, data: { ...r.metadata } };
      return { data: { ...r.metadata }, warnings: r.warnings };
    },
    delete: async ({ engine, data }) => {
      await engine.deleteLatest(data.path!);
    },
  },
});

const versionsField = f.ints('Version numbers (list or comma-separated)').default([]);

const deleteRoute = defineRoute({
  path: 'delete/*path',
  summary: 'Soft-delete versions of a secret (undoable)',
  fields: { path: pathField, versions: versionsField },
  operations: {
    update: async ({ engine, data }) => {
      await engine.deleteVersions(data.path!, data.versions);
    },
  },
});

const undeleteRoute = defineRoute({
  path: 'undelete/*path',
  summary: 'Restore soft-deleted versions of a secret',
  fields: { path: pathField, versions: versionsField },
  operations: {
    update: async ({ engine, data }) => {
      await engine.undeleteVersions(data.path!, data.versions);
    },
  },
});

const destroyRoute = defineRoute({
  path: 'destroy/*path',
  summary: 'Permanently remove the data of versions of a secret',
  fields: { path: pathField, versions: versionsField },
  operations: {
    update: async ({ engine, data }) => {
      await engine.destroyVersions(data.path!, data.versions);
    },
  },
});

const metadataFields = {
  path: pathField,
  max_versions: f.int('Versions kept for this secret (0 = engine setting)').min(0),
  cas_required: f.bool('Require check-and-set on writes of this secret'),
  delete_version_after: f.duration('Soft-delete versions this long after writing ("0s" clears)'),
  custom_metadata: f.map('Version-independent string key/value pairs (at most 64)'),
};

type MetadataCtx = RequestContext<
  KvEngine,
  {
    path?: string;
    max_versions?: number;
    cas_required?: boolean;
    delete_version_after?: number;
    custom_metadata?: Record<string, unknown>;
  }
>;

const metadataRoute = defineRoute({
  path: 'metadata(/*path)',
  summary: 'Read, write, patch, list and delete the metadata (and all versions) of secrets',
  fields: metadataFields,
  exists: ({ engine, data }) => engine.exists(data.path ?? ''),
  operations: {
    list: async ({ engine, data }) => ({ data: { keys: await engine.list(data.path ?? '') } }),
    read: async ({ engine, data }: MetadataCtx) => {
      if (!data.path) return rootWarning();
      const m = await engine.readMetadata(data.path);
      return m ? { data: m } : undefined;
    },
    update: async ({ engine, data }: MetadataCtx) => {
      if (!data.path) return rootWarning();
      const warnings = await engine.writeMetadata(data.path, metadataChanges(data, false));
      return warnings.length ? { data: null, warnings } : undefined;
    },
    patch: async ({ engine, data }: MetadataCtx) => {
      if (!data.path) return rootWarning();
      const warnings = await engine.patchMetadata(data.path, metadataChanges(data, true));
      if (warnings === null) return { status: 404, data: null };
      return warnings.length ? { data: null, warnings } : undefined;
    },
    delete: async ({ engine, data }: MetadataCtx) => {
      if (!data.path) return rootWarning();
      await engine.deleteMetadata(data.path);
    },
  },
});

const subkeysRoute = defineRoute({
  path: 'subkeys/*path',
  summary: 'Read the structure of a secret with every value replaced by null',
  fields: {
    path: pathField,
    version: f.int('Version (0 or absent = current)'),
    depth: f.int('Deepest nesting level to show (0 = no limit)').min(0),
  },
  operations: {
    read: async ({ engine, data }) => {
      const r = await engine.subkeys(data.path!, data.version ?? 0, data.depth ?? 0);
      if (!r) return;
      return { status: r.gone ? 404 : undefined, data: { metadata: r.metadata, subkeys: r.subkeys } };
    },
  },
});

/** Anything else (a KV v1-style path such as `secret/foo`): 404 with Vault's hint to use data/ and metadata/. */
function invalidPath({ params, operation }: RequestContext<KvEngine, unknown>): Reply {
  if (ROOT_WORDS.has(params.rest ?? '')) return rootWarning();
  return { status: 404, data: null, warnings: [invalidPathWarning(KV_VERB[operation] ?? 'get')] };
}

const eventsRoute = defineRoute({
  path: 'events',
  summary: 'Recent change events of this mount after a cursor (keyhold extension; keyhold run --watch follows it)',
  description:
    'Answers {epoch, index, events: [{index, kind, path, version, current_version}], truncated} for changes after `index` ' +
    '(0: none, only the cursor) of the same `epoch`. Only events of secrets the token may read (data or metadata) are listed; ' +
    'paths and version numbers, never values. `truncated` means some changes are gone (the reader fell more than 1,024 ' +
    'behind, or the daemon restarted): read again what matters. With `wait` (seconds, at most 30) and a cursor, an answer ' +
    'with no event waits up to that long for the next change (a long poll; the keyhold agent cache follows it).',
  fields: {
    index: f.int('Cursor: the index of the last event seen (0 = start now)').min(0).default(0),
    epoch: f.string('The epoch the cursor belongs to (from the previous answer)'),
    wait: f.int('Long poll: seconds to wait for a change when there is none yet (0-30)').min(0).max(30).default(0),
  },
  operations: {
    read: async ({ engine, data, mount, allowed }) => {
      const r = await engine.changes.wait(data.index, data.epoch, data.wait);
      const mayRead = (p: string) =>
        allowed('read', `${mount.path}data/${p}`) || allowed('read', `${mount.path}metadata/${p}`);
      return { data: { ...r, events: r.events.filter((e) => mayRead(e.path)) } };
    },
  },
});

const invalidRoute = defineRoute({
  path: '(*rest)',
  summary: 'KV v1-style paths are not supported on a version 2 mount',
  fields: { rest: f.string('The unsupported path') },
  operations: { read: invalidPath, update: invalidPath, patch: invalidPath, delete: invalidPath, list: invalidPath },
});

/** Every KV v2 endpoint, relative to the mount; the catch-all comes last. */
export const kvRoutes: readonly AnyRoute[] = [
  configRoute,
  dataRoute,
  deleteRoute,
  undeleteRoute,
  destroyRoute,
  metadataRoute,
  subkeysRoute,
  eventsRoute,
  invalidRoute,
];
