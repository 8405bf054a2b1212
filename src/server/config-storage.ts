/**
 * The storage stanzas of a config file: `storage`, `ha_storage`, and `operator migrate`'s
 * storage_source / storage_destination.
 */
import type { HclItem } from '../framework/hcl.js';
import { stanzaString, stanzas, type At } from './config-values.js';

/** Storage backend types keyhold implements. */
export type StorageType = 'file' | 'inmem' | 'postgresql';

/** A storage stanza: its type and its parameters as strings (Vault passes backends a string map). */
export interface StorageConfig {
  type?: StorageType;
  /** file: the directory (also `params.path`). */
  path?: string;
  params?: Record<string, string>;
}

/** Parameters each storage backend accepts (unknown ones stop the server). */
const STORAGE_PARAMS: Record<StorageType, readonly string[]> = {
  file: ['path'],
  inmem: [],
  postgresql: [
    'connection_url',
    'table',
    'max_idle_connections',
    'max_parallel',
    'ha_enabled',
    'ha_table',
    'skip_create_table',
    'max_connect_retries',
    // keyhold: the HA lock's time to live (Vault's is fixed at 15 s); renewals run every third of it.
    'ha_lock_ttl',
  ],
};
/** Stanza keys Vault lifts out of the storage block into top-level settings. */
const LIFTED = ['redirect_addr', 'advertise_addr', 'cluster_addr', 'disable_clustering'];

/** A storage stanza (also `operator migrate`'s storage_source / storage_destination). */
export function storageStanza(item: HclItem, at: At, lifted: Record<string, { value: string; at: At }>): StorageConfig {
  const list = stanzas(item, at);
  if (list.length !== 1) at.fail('only one storage stanza is allowed');
  const { type, body, at: sat } = list[0]!;
  if (!(type in STORAGE_PARAMS))
    sat.fail(`unknown storage type "${type}" (supported: ${Object.keys(STORAGE_PARAMS).join(', ')})`);
  const allowed = STORAGE_PARAMS[type as StorageType];
  const params: Record<string, string> = {};
  for (const p of body.items) {
    const pat = sat.child(p);
    if (LIFTED.includes(p.key)) {
      lifted[p.key] = { value: stanzaString(p.value, pat), at: pat };
      continue;
    }
    if (!allowed.includes(p.key)) pat.fail(`unknown key (allowed: ${[...allowed, ...LIFTED].join(', ')})`);
    if (p.key in params) pat.fail('given twice');
    params[p.key] = stanzaString(p.value, pat);
  }
  if (type === 'file' && !params.path) sat.fail('needs path = "<directory>"');
  return { type: type as StorageType, path: params.path, params };
}
