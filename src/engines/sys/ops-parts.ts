/**
 * What the operations routes of issue 27 reach (sys/metrics, sys/rotate, sys/key-status,
 * sys/rotate/config, sys/storage/raft/snapshot*, snapshot-auto): typed here by what the routes use,
 * built by the core (server/core/core.ts) from the keyring, the telemetry and the snapshot services.
 */
import type { BarrierKeyring } from '../../storage/keyring-rotation.js';

/** A scheduled snapshot configuration (Vault Enterprise's fields). */
export interface AutoSnapshotConfig {
  /** Seconds between snapshots. */
  interval: number;
  retain: number;
  storage_type: 'local';
  path_prefix: string;
  file_prefix: string;
  /** Bytes the files of this configuration may use (0: no limit). */
  local_max_space: number;
}

/** Vault's status answer of a scheduled snapshot configuration. */
export interface AutoSnapshotStatus {
  consecutive_errors: number;
  last_snapshot_start: string;
  last_snapshot_end: string;
  last_snapshot_error: string;
  last_snapshot_url: string;
  next_snapshot_start: string;
  snapshot_start: string;
  snapshot_url: string;
}

/** The operations parts of the sys engine. */
export interface SysOps {
  readonly logger: { warn(msg: string, fields?: Record<string, unknown>): void };
  /** When the store was initialised (install time of key term 1). */
  initializedTime(): string;
  /** Barrier key terms. */
  readonly barrierKeys: Pick<BarrierKeyring, 'rotate' | 'status' | 'config' | 'setConfig'>;
  /** Metrics; absent without a telemetry stanza. */
  readonly telemetry?: {
    readonly unauthenticatedAccess: boolean;
    prometheus(onError?: (e: unknown) => void): Promise<string | null>;
    json(onError?: (e: unknown) => void): Promise<Record<string, unknown>>;
  };
  /** Snapshot save and restore. */
  readonly snapshots: { save(): Promise<Buffer>; restore(body: Buffer | undefined, force: boolean): Promise<unknown> };
  /** Scheduled snapshots. */
  readonly autoSnapshots: {
    list(): Promise<string[]>;
    get(name: string): Promise<AutoSnapshotConfig | null>;
    put(name: string, cfg: AutoSnapshotConfig): Promise<void>;
    delete(name: string): Promise<void>;
    statusOf(name: string): AutoSnapshotStatus;
  };
}
