/**
 * Vault's TypeKVPairs, the type of identity `metadata` fields: an object of strings, or "k=v" strings
 * (one, or a list: `vault write identity/entity metadata=team=payments metadata=site=eu` sends a list).
 */
import { invalid } from '../../../framework/errors.js';

/** Parse a metadata value; undefined stays undefined (field not given). */
export function kvPairs(name: string, raw: unknown): Record<string, string> | undefined {
  if (raw === undefined || raw === null) return undefined;
  const out: Record<string, string> = {};
  const pair = (s: string, at: string) => {
    const eq = s.indexOf('=');
    if (eq <= 0) throw invalid(at, `expected key=value, got "${s.length > 64 ? s.slice(0, 64) + '...' : s}"`);
    out[s.slice(0, eq)] = s.slice(eq + 1);
  };
  if (typeof raw === 'string') {
    if (raw !== '') pair(raw, name);
    return out;
  }
  if (Array.isArray(raw)) {
    raw.forEach((s, i) => {
      if (typeof s !== 'string') throw invalid(`${name}[${i}]`, 'expected a "key=value" string');
      pair(s, `${name}[${i}]`);
    });
    return out;
  }
  if (typeof raw === 'object') {
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
        throw invalid(`${name}.${k}`, 'expected a string');
      out[k] = String(v);
    }
    return out;
  }
  throw invalid(name, 'expected an object of strings or "key=value" strings');
}
