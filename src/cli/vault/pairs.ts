/** `k=v` flag values of the vault CLI (`-options=version=2`, repeatable) to a map. */
import { LocalError } from '../errors.js';

export function kvPairs(values: readonly string[], flagName: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of values) {
    const i = p.indexOf('=');
    if (i <= 0) throw new LocalError(`${flagName}: expected key=value, got "${p}"`);
    out[p.slice(0, i)] = p.slice(i + 1);
  }
  return out;
}
