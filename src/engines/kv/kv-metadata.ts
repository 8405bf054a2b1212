/**
 * The stored records of a KV version 2 secret (metadata with per-version states, version data) and the
 * pure rules over them: a version's metadata view, scheduled deletion (delete_version_after),
 * check-and-set, settings changes. kv-engine.ts reads and writes them under the path's lock.
 */
import { invalid } from '../../framework/errors.js';
import { formatRfc3339Nano } from './kv-time.js';
import { MESSAGES, parseCas } from './kv-rules.js';

/** Engine-wide settings (the config endpoint). */
export interface KvConfig {
  maxVersions: number;
  casRequired: boolean;
  /** Seconds; 0 = unset, negative = disabled for every secret (Vault's "-1s"). */
  deleteVersionAfter: number;
}

/** State of one version, as Vault shows it in metadata. */
export interface VersionState {
  created_time: string;
  /** RFC 3339, or "" when not deleted and not scheduled for deletion. */
  deletion_time: string;
  destroyed: boolean;
}

/** Version metadata as returned with data (`data.metadata` on read, `data` on write). */
export interface VersionMetadata extends VersionState {
  custom_metadata: Record<string, string> | null;
  version: number;
}

/** The stored metadata record of one secret (snake_case: it is also the wire shape, minus bookkeeping). */
export interface MetaRecord {
  created_time: string;
  updated_time: string;
  current_version: number;
  oldest_version: number;
  max_versions: number;
  cas_required: boolean;
  /** Seconds. */
  delete_version_after: number;
  custom_metadata: Record<string, string> | null;
  versions: Record<string, VersionState>;
  /** Lowest pruned version whose record may still exist (a failed clean-up, retried on the next write). */
  prune_from?: number;
}

/** The stored record of one version. */
export interface VersionRecord {
  data: Record<string, unknown>;
  created_time: string;
}

/** Options of a data write or patch (the request's `options` object). */
export interface WriteOptions {
  cas?: unknown;
}

/** Settings changed by a metadata write or patch (absent = unchanged). */
export interface MetadataChanges {
  maxVersions?: number;
  casRequired?: boolean;
  deleteVersionAfter?: number;
  /** Replaces (write) or merge-patches (patch; null values remove keys) the custom metadata. */
  customMetadata?: Record<string, string | null>;
}

/** The metadata of a secret not written yet. */
export function emptyMeta(): MetaRecord {
  return {
    created_time: '',
    updated_time: '',
    current_version: 0,
    oldest_version: 0,
    max_versions: 0,
    cas_required: false,
    delete_version_after: 0,
    custom_metadata: null,
    versions: {},
  };
}

/** Metadata of version `n` (which must exist), as returned with its data. */
export function versionMetadata(meta: MetaRecord, n: number): VersionMetadata {
  const vm = meta.versions[n]!;
  return {
    created_time: vm.created_time,
    custom_metadata: meta.custom_metadata,
    deletion_time: vm.deletion_time,
    destroyed: vm.destroyed,
    version: n,
  };
}

/**
 * Deletion time of a version created (or undeleted) at `ns`: the smaller non-zero delete_version_after of
 * engine and secret (delete_version_after.go), none when both are zero or the engine disabled it.
 */
export function scheduledDeletion(ns: bigint, cfg: KvConfig, meta: MetaRecord): string {
  if (cfg.deleteVersionAfter < 0) return '';
  const candidates = [cfg.deleteVersionAfter, meta.delete_version_after].filter((s) => s > 0);
  if (candidates.length === 0) return '';
  return formatRfc3339Nano(ns + BigInt(Math.min(...candidates)) * 1_000_000_000n);
}

/** Vault's validateCheckAndSetOption. */
export function checkCas(options: WriteOptions | undefined, cfg: KvConfig, meta: MetaRecord): void {
  if (options && Object.hasOwn(options, 'cas')) {
    if (parseCas(options.cas) !== meta.current_version) throw invalid(MESSAGES.casMismatch);
  } else if (cfg.casRequired || meta.cas_required) {
    throw invalid(MESSAGES.casRequired);
  }
}

/** Apply a metadata write (`patch` false: custom metadata replaced) or patch (merged) to the record. */
export function applyChanges(meta: MetaRecord, c: MetadataChanges, patch: boolean): void {
  if (c.maxVersions !== undefined) meta.max_versions = c.maxVersions;
  if (c.casRequired !== undefined) meta.cas_required = c.casRequired;
  if (c.deleteVersionAfter !== undefined) meta.delete_version_after = c.deleteVersionAfter;
  if (c.customMetadata !== undefined) {
    const next: Record<string, string> = patch ? { ...(meta.custom_metadata ?? {}) } : {};
    for (const [k, v] of Object.entries(c.customMetadata)) {
      if (v === null) delete next[k];
      else Object.defineProperty(next, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
    // Vault stores custom metadata in a protobuf map: an empty map reads back as null.
    meta.custom_metadata = Object.keys(next).length ? next : null;
  }
}
