/**
 * Read a record's bytes at rest straight from the file backend's log (no lock, no daemon): the
 * newest put of `key` across the segments, or null when absent or deleted. For tests that check what
 * storage holds on disk independently of the daemon's read path.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { logFilesInOrder, readFrames } from '../../src/storage/file-format.js';

/** The stored (barrier-level) bytes of `key` under the storage directory `storage`. */
export function storedRecord(storage: string, key: string): Buffer | null {
  const dir = join(storage, 'log');
  if (!existsSync(dir)) return null;
  const order = logFilesInOrder(readdirSync(dir)).load.map((f) => f.name);
  let value: Buffer | null = null;
  for (const n of order) {
    const buf = readFileSync(join(dir, n));
    for (const f of readFrames(buf))
      for (const op of f.ops)
        if (op.key === key) value = op.del ? null : Buffer.from(buf.subarray(op.off, op.off + op.len));
  }
  return value;
}
