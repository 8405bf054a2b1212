/**
 * Scheduled snapshots with Vault Enterprise's API: sys/storage/raft/snapshot-auto/config/:name
 * (interval, retain, storage_type = "local", path_prefix, file_prefix, local_max_space) and
 * sys/storage/raft/snapshot-auto/status/:name. The scheduler is server/auto-snapshots.ts.
 */
import { invalid, notFound } from '../../framework/errors.js';
import { f, parseDuration } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { SysParts } from './sys-parts.js';

const route = routesFor<SysParts>();

/** Names of the storage types keyhold writes to (Vault also has aws-s3, azure-blob, google-gcs). */
const STORAGE_TYPES = ['local'];

/** Scheduled snapshot routes. */
export const snapshotAutoRoutes: AnyRoute[] = [
  route({
    path: 'storage/raft/snapshot-auto/config',
    standby: 'active', // state only the active node holds
    summary: 'List the scheduled snapshot configurations',
    fields: {},
    sudo: true,
    operations: { list: async ({ engine }) => ({ data: { keys: await engine.ops.autoSnapshots.list() } }) },
  }),
  route({
    path: 'storage/raft/snapshot-auto/config/:name',
    standby: 'active', // state only the active node holds
    summary: 'Read, write or delete a scheduled snapshot configuration',
    description:
      'Taken by the node that writes (a single daemon or the cluster active) every interval into path_prefix as <file_prefix>-<time>.snap; the newest retain files are kept.',
    fields: {
      name: f.name('Configuration name'),
      interval: f.any('Time between snapshots (duration, e.g. "1h"; at least 1s)'),
      retain: f.int('Snapshot files to keep').min(1).default(1),
      storage_type: f.string('Where snapshots go: "local" (a directory on the node)'),
      path_prefix: f.string('Directory for the snapshot files (absolute path)'),
      file_prefix: f.string('File name prefix').default('vault-snapshot'),
      local_max_space: f.int('Bytes the files of this configuration may use (0: no limit)').min(0).default(0),
    },
    sudo: true,
    operations: {
      read: async ({ engine, data }) => {
        const c = await engine.ops.autoSnapshots.get(data.name);
        if (!c) throw notFound();
        return { data: { ...c } };
      },
      update: async ({ engine, data }) => {
        if (data.interval === undefined || data.interval === '') throw invalid('interval', 'is required');
        const interval = parseDuration('interval', data.interval);
        if (interval < 1) throw invalid('interval', 'must be at least 1s');
        if (!data.storage_type) throw invalid('storage_type', 'is required');
        if (!STORAGE_TYPES.includes(data.storage_type))
          throw invalid(
            'storage_type',
            `"${data.storage_type}" is not supported by keyhold (supported: ${STORAGE_TYPES.join(', ')})`,
          );
        if (!data.path_prefix) throw invalid('path_prefix', 'is required for storage_type "local"');
        if (!data.path_prefix.startsWith('/')) throw invalid('path_prefix', 'must be an absolute directory path');
        if (!/^[A-Za-z0-9._-]+$/.test(data.file_prefix))
          throw invalid('file_prefix', 'may hold letters, digits, ".", "_" and "-" only');
        await engine.ops.autoSnapshots.put(data.name, {
          interval,
          retain: data.retain,
          storage_type: 'local',
          path_prefix: data.path_prefix,
          file_prefix: data.file_prefix,
          local_max_space: data.local_max_space,
        });
      },
      delete: async ({ engine, data }) => {
        await engine.ops.autoSnapshots.delete(data.name);
      },
    },
  }),
  route({
    path: 'storage/raft/snapshot-auto/status/:name',
    standby: 'active', // state only the active node holds
    summary: 'Status of a scheduled snapshot configuration on this node',
    fields: { name: f.name('Configuration name') },
    sudo: true,
    operations: {
      read: async ({ engine, data }) => {
        if (!(await engine.ops.autoSnapshots.get(data.name))) throw notFound();
        return { data: { ...engine.ops.autoSnapshots.statusOf(data.name) } };
      },
    },
  }),
];
