/**
 * Snapshots with Vault's paths (sys/storage/raft/snapshot, sys/storage/raft/snapshot-force) so
 * `vault operator raft snapshot save|restore` works, for every storage backend keyhold has.
 * The work is server/snapshot-service.ts; the file format storage/snapshot.ts.
 */
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { SysParts } from './sys-parts.js';

const route = routesFor<SysParts>();

/** Snapshot save and restore routes. */
export const snapshotRoutes: AnyRoute[] = [
  route({
    path: 'storage/raft/snapshot',
    standby: 'active', // state only the active node holds
    summary: 'Save (GET) a point-in-time snapshot of the whole store, or restore (POST) one onto this node',
    description:
      'The snapshot holds the records as stored (barrier-encrypted) with a checksum manifest; a truncated or altered file is refused before anything changes. POST takes the file as the request body (at most max_request_size bytes).',
    fields: {},
    sudo: true,
    operations: {
      read: async ({ engine }) => ({
        raw: { contentType: 'application/octet-stream', body: await engine.ops.snapshots.save(), status: 200 },
      }),
      update: async ({ engine, body }) => {
        await engine.ops.snapshots.restore(body, false);
      },
    },
  }),
  route({
    path: 'storage/raft/snapshot-force',
    standby: 'active', // state only the active node holds
    summary:
      "Restore a snapshot taken from a store with another keyring (the node seals; that store's unseal keys unseal it)",
    fields: { force: f.bool('Accepted for compatibility') },
    sudo: true,
    operations: {
      update: async ({ engine, body }) => {
        await engine.ops.snapshots.restore(body, true);
      },
    },
  }),
];
