/**
 * Read a record's bytes at rest straight from the file backend's log (no lock, no daemon): the
 * newest put of `key` across the segments, or null when absent or deleted. For tests that check what
 * storage holds on disk independently of the daemon's read path.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readFrames } from '../../src/storage/file.js';

/** The stored (barrier-level) bytes of `key` under the storage directory `storage`. */
export function storedRecord(storage: string, key: string): Buffer | null {
  const dir = join(storage, 'log');
  if (!existsSync(dir)) return null;
  const files = readdirSync(dir).filter((n) => /^\d{16}\.(seg|cmp)$/.test(n));
  const cmp = files.filter((n) => n.endsWith('.cmp')).sort().at(-1);
  const order = files.filter((n) => !cmp || n === cmp || Number(n.slice(0, 16)) > Number(cmp.slice(0, 16))).sort((a, b) => Number(a.slice(0, 16)) - Number(b.slice(0, 16)) || (a.endsWith('.cmp') ? -1 : 1));
  let value: Buffer | null = null;
  for (const n of order) {
    const buf = readFileSync(join(dir, n));
    for (const f of readFrames(buf)) for (const op of f.ops) if (op.key === key) value = op.del ? null : Buffer.from(buf.subarray(op.off, op.off + op.len));
  }
  return value;
}
