/**
 * Vault's destination type ids as aliases of keyhold's neutral ones (issue 31 part 1): `aws-sm` is
 * provider-a-sm, `azure-kv` provider-b-kv, `gcp-sm` provider-c-sm, `gh` repohost and
 * `vercel-project` hosting-project. Storage always uses the neutral id, so a destination created
 * under one id is the same destination under the other; answers show the id the caller used (in a
 * path), or, where no id was used (LIST sys/sync/destinations, association lists), the id the
 * destination was created under. gitlab has one id only (Vault uses the same).
 */
import { invalid } from '../framework/errors.js';
import { DESTINATION_TYPE_IDS, type DestinationRecord, type DestinationType } from './types.js';

/** Vault's id -> keyhold's id. */
export const VAULT_TYPE_ALIASES: Readonly<Record<string, DestinationType>> = {
  'aws-sm': 'provider-a-sm',
  'azure-kv': 'provider-b-kv',
  'gcp-sm': 'provider-c-sm',
  gh: 'repohost',
  'vercel-project': 'hosting-project',
};

/** Every id a path may carry: keyhold's ids, then Vault's. */
export const ALL_TYPE_IDS: readonly string[] = [...DESTINATION_TYPE_IDS, ...Object.keys(VAULT_TYPE_ALIASES)];

/** The neutral type an id names (either spelling), or null. */
export function canonicalType(id: string): DestinationType | null {
  if ((DESTINATION_TYPE_IDS as readonly string[]).includes(id)) return id as DestinationType;
  return VAULT_TYPE_ALIASES[id] ?? null;
}

/** The neutral type an id names; 400 naming `type` (and every accepted id) otherwise. */
export function requireType(id: string): DestinationType {
  const t = canonicalType(id);
  if (!t) throw invalid('type', `unknown destination type "${id.slice(0, 40)}"; supported: ${ALL_TYPE_IDS.join(', ')}`);
  return t;
}

/** Whether `id` is one of Vault's aliases (not the neutral id). */
export function isAlias(id: string): boolean {
  return Object.hasOwn(VAULT_TYPE_ALIASES, id);
}

/** The id a destination is shown under when the caller named none: the one it was created under. */
export function shownType(d: Pick<DestinationRecord, 'type' | 'type_id'>): string {
  return d.type_id && canonicalType(d.type_id) === d.type ? d.type_id : d.type;
}
