/**
 * Facts of Vault's KV v2 plugin (hashicorp/vault-plugin-secrets-kv: path_data.go, path_metadata.go,
 * path_delete.go, path_destroy.go, backend.go) that keyhold reproduces: limits, defaults and messages.
 */
import { invalid } from '../../framework/errors.js';
import { MAX_SEGMENT_BYTES } from './path-cipher.js';

/** Versions kept when neither the engine config nor the secret sets max_versions. */
export const DEFAULT_MAX_VERSIONS = 10;

/** Custom metadata limits (path_metadata.go validateCustomMetadata). */
export const CUSTOM_METADATA = { maxKeys: 64, maxKeyLength: 128, maxValueLength: 512 } as const;

/** Error and warning texts, verbatim from the plugin (clients match on some of them). */
export const MESSAGES = {
  casMismatch: 'check-and-set parameter did not match the current version',
  casRequired: 'check-and-set parameter required for this call',
  casParse: 'error parsing check-and-set parameter',
  noData: 'no data provided',
  noVersions: 'No version number provided',
  noVersionsDestroy: 'no version number provided',
  casIgnored: '"cas_required" set to false, but is mandated by backend config. This value will be ignored.',
  rootNotSupported: 'Non-listing operations on the root of a K/V v2 mount are not supported.',
  cleanupFailed: 'error occurred when cleaning up old versions, these will be cleaned up on next write',
} as const;

/** The 404 warning for a KV v1-style path on a v2 mount (backend.go pathInvalid), naming the `vault kv` verb. */
export function invalidPathWarning(verb: string): string {
  return `Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv ${verb}' for this operation.`;
}

/** `vault kv` verb per operation, for the warning above. */
export const KV_VERB: Record<string, string> = {
  create: 'put',
  update: 'put',
  patch: 'patch',
  read: 'get',
  list: 'list',
  delete: 'delete',
};

/** Top-level words whose bare use answers with the "root of the mount" warning. */
export const ROOT_WORDS = new Set(['metadata', 'data', 'delete', 'undelete', 'destroy']);

/**
 * Check a secret path: no empty segments (they would alias "a/b"), and segments short enough for the
 * encrypted storage name. Throws 400 naming "path".
 */
export function checkSecretPath(path: string): void {
  if (path === '') throw invalid('missing path');
  for (const seg of path.split('/')) {
    if (seg === '') throw invalid('path', 'must not contain empty segments (leading, trailing or double slashes)');
    if (Buffer.byteLength(seg, 'utf8') > MAX_SEGMENT_BYTES)
      throw invalid('path', `each segment must be at most ${MAX_SEGMENT_BYTES} bytes`);
  }
}

function printable(s: string): boolean {
  // Go's unicode.IsPrint, approximately: no control characters, no unassigned/format/separators other than space.
  return !/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u.test(s) && !/[\u00a0\u2000-\u200a\u202f\u205f\u3000]/.test(s);
}

/** Render errors like Go's hashicorp/go-multierror (the text Vault returns for custom_metadata). */
function multiError(errs: string[]): string {
  const items = errs.map((e) => `\t* ${e}`).join('\n');
  return `${errs.length} error${errs.length === 1 ? '' : 's'} occurred:\n${items}\n\n`;
}

const PREFIX = 'custom_metadata validation failed';

/**
 * Coerce a custom_metadata object to a string map (scalars become strings; with `dropNulls`, nulls are
 * kept as deletions for merge patch) and validate it like Vault; throws 400 with Vault's text.
 */
export function parseCustomMetadata(raw: Record<string, unknown>, dropNulls: boolean): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (v === null || v === undefined) {
      if (dropNulls) {
        out[k] = null;
        continue;
      }
      out[k] = '';
    } else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
      out[k] = typeof v === 'boolean' ? (v ? '1' : '0') : String(v);
    else
      throw invalid(
        `${PREFIX}: value for key ${JSON.stringify(k)} must be a string, got ${Array.isArray(v) ? 'a list' : 'an object'}`,
      );
  }
  const present = Object.entries(out).filter((e): e is [string, string] => e[1] !== null);
  if (present.length > CUSTOM_METADATA.maxKeys) {
    throw invalid(
      multiError([
        `${PREFIX}: payload must contain at most ${CUSTOM_METADATA.maxKeys} keys, provided ${present.length}`,
      ]),
    );
  }
  const errs: string[] = [];
  for (const [k, v] of present) {
    const kl = Buffer.byteLength(k, 'utf8');
    const vl = Buffer.byteLength(v, 'utf8');
    if (kl === 0 || kl > CUSTOM_METADATA.maxKeyLength)
      errs.push(
        `${PREFIX}: length of key ${JSON.stringify(k)} is ${kl} but must be 0 < len(key) <= ${CUSTOM_METADATA.maxKeyLength}`,
      );
    if (vl === 0 || vl > CUSTOM_METADATA.maxValueLength)
      errs.push(
        `${PREFIX}: length of value for key ${JSON.stringify(k)} is ${vl} but must be 0 < len(value) <= ${CUSTOM_METADATA.maxValueLength}`,
      );
    if (!printable(k)) errs.push(`${PREFIX}: key ${JSON.stringify(k)} (${k}) contains unprintable characters`);
    if (!printable(v)) errs.push(`${PREFIX}: value for key ${JSON.stringify(k)} contains unprintable characters`);
  }
  if (errs.length) throw invalid(multiError(errs));
  return out;
}

/**
 * Decode `options.cas` like mapstructure.WeakDecode into an int: integers, numeric strings ("" is 0),
 * booleans and null; anything else is Vault's "error parsing check-and-set parameter".
 */
export function parseCas(raw: unknown): number {
  if (raw === null || raw === undefined) return 0;
  if (typeof raw === 'boolean') return raw ? 1 : 0;
  if (typeof raw === 'number' && Number.isFinite(raw)) return Math.trunc(raw);
  if (typeof raw === 'string') {
    const s = raw.trim();
    if (s === '') return 0;
    if (/^[+-]?\d{1,16}$/.test(s)) return Number(s);
  }
  throw invalid(MESSAGES.casParse);
}
