/**
 * Mount tuning (`sys/mounts/:path/tune`, `sys/auth/:path/tune`): the fields Vault accepts, checked
 * (a malformed value is a 400 naming the field) and turned into the mount's config, where the code
 * each one governs reads it (design note section 7, "a setting is a value with one owner"):
 *
 * | field                          | read by                                                      |
 * | ------------------------------ | ------------------------------------------------------------ |
 * | default_lease_ttl, max_lease_ttl | KV v1 reads' lease_duration (kv-v1.ts), tokens of auth mounts (auth/token-ttl.ts via login-tokens.ts) |
 * | audit_non_hmac_request_keys / _response_keys | the audit broker (values of these keys logged in clear) |
 * | listing_visibility             | sys/internal/ui/mounts (unauthenticated listing)             |
 * | passthrough_request_headers    | the router: the only request headers an engine sees          |
 * | allowed_response_headers       | the router: the only headers an engine's reply may set       |
 * | allowed_managed_keys           | transit's managed-key types                                  |
 * | options.version                | KV v1 -> v2 upgrade in place (core tune)                     |
 *
 * Field names and rules follow Vault's vault/logical_system.go (handleTuneWriteCommon); the texts
 * are ours.
 */
import { invalid } from '../../framework/errors.js';
import { f, parseDuration } from '../../framework/fields.js';
import type { MountInfo } from '../../framework/context.js';

/** Vault's system default and max lease TTL (768h). */
export const SYSTEM_LEASE_TTL = 768 * 3600;

/** List-valued tune settings (a list of strings, or one comma-separated string as the Vault CLI sends). */
export const LIST_SETTINGS = [
  'audit_non_hmac_request_keys',
  'audit_non_hmac_response_keys',
  'passthrough_request_headers',
  'allowed_response_headers',
] as const;

/** Fields every tune endpoint declares (secrets engines and auth methods). */
export const COMMON_TUNE_FIELDS = {
  path: f.name('Mount path'),
  description: f.string('New description'),
  default_lease_ttl: f.any('Default lease TTL ("system" or "" resets to the system default)'),
  max_lease_ttl: f.any('Max lease TTL ("system" or "" resets to the system max)'),
  audit_non_hmac_request_keys: f.any('Request data keys audit devices log in clear (not HMACed)'),
  audit_non_hmac_response_keys: f.any('Response data keys audit devices log in clear (not HMACed)'),
  listing_visibility: f.string(
    '"unauth" lists the mount in sys/internal/ui/mounts without a token; "hidden" or "" do not',
  ),
  passthrough_request_headers: f.any('Request headers passed to the engine'),
  allowed_response_headers: f.any('Response headers the engine may set'),
  options: f.stringMap('Engine options (kv: version=2 upgrades KV v1 in place)'),
  plugin_version: f.string('Built-in engines only: must be empty'),
};

/** Secrets-engine tune fields. */
export const SECRETS_TUNE_FIELDS = {
  ...COMMON_TUNE_FIELDS,
  allowed_managed_keys: f.any('Managed keys this mount may use (the whole list is replaced)'),
};

/** Seconds of a stored TTL setting (0 = unset: the system's). */
export function storedTtl(v: unknown): number {
  if (v === undefined || v === null || v === '' || v === 'system') return 0;
  try {
    return parseDuration('ttl', v);
  } catch {
    return 0;
  }
}

/** A TTL of a tune body: seconds, 0 for "system"/"" (unset); 400 naming the field otherwise. */
function ttlInput(name: string, v: unknown): number {
  if (v === '' || v === 'system' || v === 0 || v === '0') return 0;
  if (typeof v === 'number' && (!Number.isInteger(v) || v < 0))
    throw invalid(name, `must be a whole number of seconds or a duration such as "1h", got ${v}`);
  return parseDuration(name, v);
}

/** A list setting: a JSON list of strings or one comma-separated string; 400 naming the field otherwise. */
export function stringList(name: string, v: unknown): string[] {
  if (typeof v === 'string')
    return v === ''
      ? []
      : v
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
  if (Array.isArray(v) && v.every((x) => typeof x === 'string'))
    return (v as string[]).map((s) => s.trim()).filter((s) => s !== '');
  throw invalid(name, 'expected a list of strings or a comma-separated string');
}

/** `allowed_managed_keys` as a list of names (a list, or one string per Vault's CLI flag). */
export function managedKeyList(v: unknown): string[] {
  const list = Array.isArray(v) ? v : v === undefined || v === null || v === '' ? [] : [v];
  return list.map((x) => {
    if (typeof x !== 'string' || x === '') throw invalid('allowed_managed_keys', 'must be a list of managed key names');
    return x.toLowerCase();
  });
}

/**
 * The config changes of a tune body's common fields, checked against the mount's current settings:
 * TTLs in seconds (0 = system), lists normalised, listing_visibility one of Vault's values. Header
 * names are kept lower-case (HTTP header names are case-insensitive; Node gives them lower-case).
 */
export function tuneConfigChanges(raw: Record<string, unknown>, current: MountInfo): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['default_lease_ttl', 'max_lease_ttl'] as const)
    if (raw[k] !== undefined && raw[k] !== null) out[k] = ttlInput(k, raw[k]);
  if (raw.listing_visibility !== undefined && raw.listing_visibility !== null) {
    const v = raw.listing_visibility;
    if (typeof v !== 'string' || !['', 'unauth', 'hidden'].includes(v))
      throw invalid('listing_visibility', `must be "unauth", "hidden" or "", got ${JSON.stringify(v)}`);
    out.listing_visibility = v;
  }
  for (const k of LIST_SETTINGS) {
    if (raw[k] === undefined || raw[k] === null) continue;
    const list = stringList(k, raw[k]);
    out[k] =
      k === 'passthrough_request_headers' || k === 'allowed_response_headers'
        ? list.map((h) => checkHeaderName(k, h))
        : list;
  }
  if (raw.plugin_version !== undefined && raw.plugin_version !== null && raw.plugin_version !== '') {
    throw invalid(
      'plugin_version',
      `keyhold runs built-in engines only; no version "${String(raw.plugin_version).slice(0, 64)}" of "${current.type}" exists`,
    );
  }
  checkTtlOrder(current, out);
  return out;
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function checkHeaderName(field: string, h: string): string {
  if (!HEADER_NAME.test(h)) throw invalid(field, `"${h.slice(0, 64)}" is not a valid HTTP header name`);
  return h.toLowerCase();
}

/**
 * Default above max is refused, as Vault refuses it (its text, which clients match); a max above the
 * system's is allowed (Vault allows it: hvac's test tunes 12345678 s).
 */
function checkTtlOrder(current: MountInfo, changes: Record<string, unknown>): void {
  const def =
    changes.default_lease_ttl !== undefined
      ? (changes.default_lease_ttl as number)
      : storedTtl(current.config.default_lease_ttl);
  const max =
    changes.max_lease_ttl !== undefined ? (changes.max_lease_ttl as number) : storedTtl(current.config.max_lease_ttl);
  if (max > 0 && def > max) throw invalid('given default lease TTL greater than given max lease TTL');
  if (max === 0 && def > SYSTEM_LEASE_TTL)
    throw invalid('default_lease_ttl', `${def}s is greater than the system max lease TTL of ${SYSTEM_LEASE_TTL}s`);
}

/** The effective default and max lease TTL of a mount in seconds (the system's where unset; default never above max). */
export function mountLeaseTtls(m: MountInfo): { defaultTtl: number; maxTtl: number } {
  const max = storedTtl(m.config.max_lease_ttl) || SYSTEM_LEASE_TTL;
  const def = storedTtl(m.config.default_lease_ttl) || SYSTEM_LEASE_TTL;
  return { defaultTtl: Math.min(def, max), maxTtl: max };
}

/** The optional settings of a mount as Vault shows them in tune reads and mount listings (only those set). */
export function tunedSettingsView(c: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof c.listing_visibility === 'string' && c.listing_visibility !== '')
    out.listing_visibility = c.listing_visibility;
  for (const k of LIST_SETTINGS) if (Array.isArray(c[k]) && (c[k] as unknown[]).length) out[k] = c[k];
  if (Array.isArray(c.allowed_managed_keys) && c.allowed_managed_keys.length)
    out.allowed_managed_keys = c.allowed_managed_keys;
  return out;
}

/** A secrets mount's tune read (Vault's handleMountTuneRead): effective TTLs in seconds, then what is set. */
export function secretsTuneView(m: MountInfo): Record<string, unknown> {
  const { defaultTtl, maxTtl } = mountLeaseTtls(m);
  return {
    description: m.description,
    default_lease_ttl: defaultTtl,
    max_lease_ttl: maxTtl,
    force_no_cache: m.config.force_no_cache === true,
    options: m.options,
    ...tunedSettingsView(m.config),
  };
}

/**
 * The answer of a settings write: none (204), or an empty one when the body had fields the route does
 * not declare, so the router's "Endpoint ignored these unrecognized parameters" warning reaches the
 * caller (Vault's framework answers 200 with the warning rather than 204).
 */
export function settingsReply(
  raw: Record<string, unknown>,
  fields: Record<string, unknown>,
): { data: null } | undefined {
  for (const k of Object.keys(raw)) if (!Object.hasOwn(fields, k)) return { data: null };
  return undefined;
}
