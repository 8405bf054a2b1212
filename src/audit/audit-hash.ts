/**
 * Audit hashing, as Vault's audit devices do it: a value is logged as `hmac-sha256:<hex>` of
 * HMAC-SHA256 under the device's salt, so the log can be searched (sys/audit-hash gives the hash of
 * a known value) without holding the value.
 */
import { createHmac } from 'node:crypto';

/** Prefix of every hashed value (Vault's salt.GetIdentifiedHMAC format). */
export const HASH_PREFIX = 'hmac-sha256:';

/** `hmac-sha256:<hex>` of `value` under `salt`. */
export function hashValue(salt: Buffer, value: string): string {
  return HASH_PREFIX + createHmac('sha256', salt).update(value, 'utf8').digest('hex');
}

/**
 * A copy of `value` with every string replaced by its hash (Vault hashes every string of request and
 * response data). Numbers, booleans and null are kept, except under a key in `sensitive` (fields a
 * route declares sensitive, e.g. KV `data`), where every scalar is hashed as its JSON text, so a
 * numeric secret does not leak either. Object keys are kept (they name fields, not values).
 */
export function hashStructure(value: unknown, salt: Buffer, sensitive: ReadonlySet<string> = new Set()): unknown {
  return walk(value, salt, sensitive, false);
}

function walk(value: unknown, salt: Buffer, sensitive: ReadonlySet<string>, all: boolean): unknown {
  if (typeof value === 'string') return hashValue(salt, value);
  if (value === null || value === undefined) return all && value === null ? hashValue(salt, 'null') : value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return all ? hashValue(salt, String(value)) : value;
  if (Buffer.isBuffer(value)) return hashValue(salt, value.toString('base64'));
  if (Array.isArray(value)) return value.map((v) => walk(v, salt, sensitive, all));
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      out[k] = walk(v, salt, sensitive, all || sensitive.has(k));
    return out;
  }
  return hashValue(salt, String(value));
}
