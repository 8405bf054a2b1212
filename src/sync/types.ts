/** Records and statuses of secret sync (reference sync-wire.md sections 1.4-1.10). */

/** Destination type ids (neutral names of the interface document, spec 2.5; gitlab from issue 31). */
export const DESTINATION_TYPE_IDS = [
  'provider-a-sm',
  'provider-b-kv',
  'provider-c-sm',
  'repohost',
  'hosting-project',
  'gitlab',
] as const;

/** One of the six destination types. */
export type DestinationType = (typeof DESTINATION_TYPE_IDS)[number];

/** True when `s` names a destination type. */
export function isDestinationType(s: string): s is DestinationType {
  return (DESTINATION_TYPE_IDS as readonly string[]).includes(s);
}

/** How a secret maps to external entries: the whole secret as JSON, or one entry per top-level key. */
export type Granularity = 'secret-path' | 'secret-key';

/** Sync statuses (reference 1.10); every transition is documented in docs/sync.md. */
export type SyncStatus =
  | 'PENDING'
  | 'SYNCING'
  | 'UNSYNCING'
  | 'SYNCED'
  | 'UNSYNCED'
  | 'UNKNOWN'
  | 'INTERNAL_VAULT_ERROR'
  | 'CLIENT_SIDE_ERROR'
  | 'EXTERNAL_SERVICE_ERROR';

/**
 * In-flight statuses (reference 1.10: the Vault UI's status badge and test double know them): shown
 * while the worker is pushing (`SYNCING`) or deleting (`UNSYNCING`) a link at the provider. They
 * are never stored: after a crash the link shows what was stored before (`PENDING` or the last outcome).
 */
export type ActivityStatus = 'SYNCING' | 'UNSYNCING';

/** Statuses that mean the last operation failed. */
export const ERROR_STATUSES: ReadonlySet<SyncStatus> = new Set([
  'UNKNOWN',
  'INTERNAL_VAULT_ERROR',
  'CLIENT_SIDE_ERROR',
  'EXTERNAL_SERVICE_ERROR',
]);

/** Severity order for summarizing several entries into one status. */
const SEVERITY: SyncStatus[] = [
  'SYNCED',
  'UNSYNCED',
  'PENDING',
  'SYNCING',
  'UNSYNCING',
  'UNKNOWN',
  'EXTERNAL_SERVICE_ERROR',
  'CLIENT_SIDE_ERROR',
  'INTERNAL_VAULT_ERROR',
];

/** The worst of several statuses (errors first, then PENDING); `fallback` for none. */
export function worstStatus(list: SyncStatus[], fallback: SyncStatus): SyncStatus {
  let best = -1;
  for (const s of list) best = Math.max(best, SEVERITY.indexOf(s));
  return best === -1 ? fallback : SEVERITY[best]!;
}

/** Options shared by every destination type (reference 1.5.1). */
export interface DestinationOptions {
  /** Custom template; absent means the type's default for the granularity. */
  secret_name_template?: string;
  granularity: Granularity;
  custom_tags: Record<string, string>;
  allowed_ipv4_addresses: string[];
  allowed_ipv6_addresses: string[];
  allowed_ports: number[];
  disable_strict_networking: boolean;
}

/** A stored destination (behind the barrier; connection may hold credentials). */
export interface DestinationRecord {
  type: DestinationType;
  name: string;
  connection: Record<string, unknown>;
  options: DestinationOptions;
  created_at: string;
  updated_at: string;
  /** Bumped on every change; connectors are rebuilt when it moves. */
  revision: number;
  purge_initiated_at?: string;
  purge_error?: string;
  /** The id the destination was created under when it was one of Vault's aliases (`aws-sm`, ...; type-aliases.ts). */
  type_id?: string;
}

/** State of one external entry of an association (key "" for secret-path granularity). */
export interface EntryState {
  sync_status: SyncStatus;
  updated_at: string;
  /** Cause of the last failure (no secret values). */
  error?: string;
  /** External name last written; needed to delete it later even if the template changed. */
  external_name?: string;
  /** Whether `external_name` currently exists at the provider as far as we know. */
  present: boolean;
  /** What the last successful write put there (no value: a keyed hash; see written-marks.ts). */
  written?: WrittenMark;
}

/** An entry's last successful write: which value (keyed hash), for which link generation and destination revision. */
export interface WrittenMark {
  /** HMAC of the link, sub-key, external name and value under the sync state's key (written-marks.ts). */
  mac: string;
  /** The link's generation the write was made for (`associations/set` bumps it and re-pushes). */
  generation: number;
  /** The destination's revision the write was made with (a change of the destination re-pushes). */
  revision: number;
}

/** A stored association (one secret linked to one destination). */
export interface LinkRecord {
  /** Storage id: encodeURIComponent(`${accessor}/${secret_name}`). */
  id: string;
  dest_type: DestinationType;
  dest_name: string;
  accessor: string;
  /** Mount path when the link was made ("secret/"); the accessor is authoritative. */
  mount: string;
  secret_name: string;
  /** Captured at set time: changing the destination affects only new or refreshed links (reference 1.5.1). */
  granularity: Granularity;
  template: string;
  /** Set by remove (or purge): the worker unsyncs, then drops the record. */
  removing?: boolean;
  /** Bumped by every set/remove; the worker only drops a record whose generation it processed. */
  generation: number;
  created_at: string;
  /** Link-wide status (shown for secret-key links before any key was synced, and link-wide failures). */
  sync_status: SyncStatus;
  updated_at: string;
  error?: string;
  entries: Record<string, EntryState>;
  /** KV version last pushed (reconciliation compares it with the current version). */
  synced_version?: number;
  /** Destination revision at the last attempt (credentials fixed -> retry CLIENT_SIDE_ERROR). */
  dest_revision?: number;
}

/** Global sync configuration (sys/sync/config). */
export interface SyncConfig {
  disabled: boolean;
  queue_capacity: number;
}

/** Defaults of sys/sync/config (reference 1.3). */
export const DEFAULT_SYNC_CONFIG: SyncConfig = { disabled: false, queue_capacity: 1_000_000 };

/** Storage id of a link. */
export function linkId(accessor: string, secretName: string): string {
  return encodeURIComponent(`${accessor}/${secretName}`);
}

/** In-memory key of a link: `type/name/id`. */
export function linkKey(type: string, name: string, id: string): string {
  return `${type}/${name}/${id}`;
}

/** Split a link key back into its parts. */
export function parseLinkKey(key: string): { type: DestinationType; name: string; id: string } {
  const [type, name, id] = key.split('/') as [DestinationType, string, string];
  return { type, name, id };
}
