/**
 * Snapshot save and restore on a running node (issue 27; Vault's sys/storage/raft/snapshot and
 * snapshot-force, for every backend). The format and the point-in-time capture are
 * storage/snapshot.ts; this is the part that knows the core: which records live outside the
 * barrier, whether a snapshot shares this store's keyring, and what a restore must reload or seal.
 */
import { invalid } from '../framework/errors.js';
import type { Logger } from '../framework/context.js';
import type { Backend } from '../storage/backend.js';
import { openRecord, type Barrier } from '../storage/barrier.js';
import {
  SnapshotCapture,
  SnapshotError,
  applySnapshot,
  decodeSnapshot,
  encodeSnapshot,
  readAtCapture,
  type Snapshot,
} from '../storage/snapshot.js';

/** What snapshots need of the core (server/core/core.ts). */
export interface SnapshotHost {
  isSealed(): boolean;
  readonly backend: Backend;
  readonly barrier: Barrier;
  readonly clock: { now(): number };
  readonly sealConfig: { storage_id: string } | null;
  readonly version: string;
  readonly logger: Logger;
  seal(): Promise<void>;
  /** Read the seal config and unseal without a person when possible. */
  start(): Promise<void>;
  readonly sealer: { load(): Promise<void>; refresh(): Promise<void> };
  readonly barrierKeys: { load(): Promise<void> };
}

/** Records that belong to this node's storage, not to its data: never saved, never overwritten. */
const LOCAL_KEYS = new Set(['core/migration']);
/** Records stored outside the barrier (plain seal config, master-key-wrapped or seal-wrapped keys, PGP ciphertext). */
const OUTSIDE_BARRIER =
  /^core\/(seal-config|keyring|keyring-previous|hsm\/.*|recovery-key|unseal-keys-backup|recovery-keys-backup)$/;

/** What a restore did. */
export interface RestoreOutcome {
  written: number;
  deleted: number;
  /** A forced restore of another keyring sealed the node. */
  sealed: boolean;
}

/** Snapshots of one core. */
export class SnapshotService {
  constructor(
    private readonly core: SnapshotHost,
    /** Drop every cache and recreate every engine instance (the core's invalidation). */
    private readonly reloadAll: () => Promise<void>,
  ) {}

  /** GET sys/storage/raft/snapshot: the store at one write index, as a snapshot file. */
  async save(): Promise<Buffer> {
    const core = this.core;
    if (core.isSealed()) throw invalid('Vault is sealed');
    const capture = new SnapshotCapture(core.backend);
    const index = await core.barrier.openCapture(capture);
    try {
      const records = await readAtCapture(core.backend, capture, (k) => LOCAL_KEYS.has(k));
      return encodeSnapshot(
        {
          format: 1,
          index,
          created: new Date(core.clock.now()).toISOString(),
          storage_id: core.sealConfig?.storage_id ?? '',
          term: core.barrier.activeTerm,
          backend: core.backend.describe().split(':')[0]!,
          version: core.version,
        },
        records,
      );
    } finally {
      core.barrier.closeCapture();
    }
  }

  /** True when a record of the snapshot sealed under term 1 opens with this store's term-1 key. */
  private sameKeyring(snap: Snapshot): boolean {
    const key = this.core.barrier.firstTermKey();
    const candidates = ['core/keyring-terms', 'core/token-mount', 'core/mounts', ...snap.records.keys()];
    for (const path of candidates) {
      const rec = snap.records.get(path);
      if (!rec || rec[0] !== 1 || OUTSIDE_BARRIER.test(path)) continue;
      try {
        openRecord(key, path, rec);
        return true;
      } catch {
        return false;
      }
    }
    return false;
  }

  /**
   * POST sys/storage/raft/snapshot(-force): check the whole file first (nothing changes for a
   * truncated or altered one), then make the store hold exactly its records. Same keyring: caches
   * and engines reload, the node stays unsealed. Another keyring (force only): the node seals and
   * the snapshot's own unseal keys (or its keychain entry or auto seal) unseal it.
   */
  async restore(body: Buffer | undefined, force: boolean): Promise<RestoreOutcome> {
    const core = this.core;
    if (core.isSealed()) throw invalid('Vault is sealed');
    if (!body || body.length === 0)
      throw invalid('the request body must be a snapshot file (keyhold operator snapshot save)');
    let snap: Snapshot;
    try {
      snap = decodeSnapshot(body);
    } catch (e) {
      if (e instanceof SnapshotError) throw invalid(`snapshot refused: ${e.message}`);
      throw e;
    }
    if (!snap.records.has('core/seal-config') || !snap.records.has('core/keyring'))
      throw invalid('snapshot refused: it holds no seal configuration or keyring');
    const same = this.sameKeyring(snap);
    if (!same && !force)
      throw invalid(
        "snapshot refused: it was taken from a store with another keyring; restore it with snapshot-force (`keyhold operator snapshot restore -force FILE`): this node then seals, and the unseal keys of the snapshot's store unseal it",
      );
    if (!same) {
      await core.seal();
      const r = await applySnapshot(core.backend, snap.records, (k) => LOCAL_KEYS.has(k));
      core.barrier.clearCache();
      await core.sealer.load();
      core.logger.warn("snapshot of another keyring restored: sealed; unseal with that store's keys", {
        records: r.written,
        index: snap.header.index,
      });
      // Its keychain entry or auto seal may unseal it at once.
      await core
        .start()
        .catch((e: unknown) =>
          core.logger.warn('unattended unseal after restore failed', { error: (e as Error)?.message }),
        );
      return { ...r, sealed: core.isSealed() };
    }
    const r = await applySnapshot(core.backend, snap.records, (k) => LOCAL_KEYS.has(k));
    core.barrier.clearCache();
    await core.sealer.refresh();
    await core.barrierKeys.load();
    await this.reloadAll();
    core.logger.info('snapshot restored', { records: r.written, deleted: r.deleted, index: snap.header.index });
    return { ...r, sealed: false };
  }
}
