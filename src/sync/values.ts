/**
 * What gets pushed (reference sync-wire.md 1.7): with `secret-path` granularity the whole KV secret
 * as one JSON object; with `secret-key` one entry per top-level key, strings as they are and other
 * values as JSON text. Objects are written with sorted keys, as Go's encoding/json does for maps.
 */
import type { Granularity } from './types.js';

/** JSON text with object keys sorted at every level. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return '[' + value.map(canonicalJson).join(',') + ']';
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return '{' + keys.map((k) => JSON.stringify(k) + ':' + canonicalJson(obj[k])).join(',') + '}';
}

/** The external entries of a secret: key "" -> JSON for secret-path, sub-key -> value for secret-key. */
export function entriesOf(data: Record<string, unknown>, granularity: Granularity): Map<string, string> {
  const out = new Map<string, string>();
  if (granularity === 'secret-path') {
    out.set('', canonicalJson(data));
    return out;
  }
  for (const k of Object.keys(data).sort()) {
    const v = data[k];
    out.set(k, typeof v === 'string' ? v : canonicalJson(v));
  }
  return out;
}
