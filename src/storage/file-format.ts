/**
 * The file backend's on-disk format (see file.ts): the log's file names and their replay order, and
 * the frames appended to them: `KHJ1 | u32 length | first 16 bytes of SHA-256(payload) | payload`,
 * the payload a run of ops (put: 1, u32 key length, key, u32 value length, value; delete: 2, u32 key
 * length, key).
 */
import { createHash } from 'node:crypto';

const MAGIC = 0x4b484a31; // "KHJ1"
/** Bytes of a frame header (magic, length, hash prefix). */
export const FRAME_HEAD = 24;
const OP_PUT = 1;
const OP_DELETE = 2;

/** A put (value) or a delete (null) to append. */
export interface Op {
  key: string;
  value: Buffer | null;
}

/** An op as parsed from a frame: the value's place in the buffer parsed. */
export interface ParsedOp {
  key: string;
  del: boolean;
  off: number;
  len: number;
}

/**
 * The log's files (names in <root>/log) in replay order, and those the newest compacted file
 * supersedes: it stands for every segment numbered up to its own number. `last` is the highest
 * number in use (0 when none).
 */
export function logFilesInOrder(names: string[]): {
  load: Array<{ name: string; no: number }>;
  superseded: Array<{ name: string; no: number }>;
  last: number;
} {
  const numbered = names
    .map((n) => /^(\d{16})\.(seg|cmp)$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ name: m[0], no: Number(m[1]), cmp: m[2] === 'cmp' }));
  const cmp = numbered.filter((f) => f.cmp).sort((a, b) => b.no - a.no)[0];
  const load: Array<{ name: string; no: number }> = [];
  const superseded: Array<{ name: string; no: number }> = [];
  for (const f of numbered) (cmp && f !== cmp && f.no <= cmp.no ? superseded : load).push({ name: f.name, no: f.no });
  load.sort((a, b) => a.no - b.no || (a.name.endsWith('.cmp') ? -1 : 1));
  return { load, superseded, last: Math.max(0, ...numbered.map((f) => f.no)) };
}

/** One op as bytes of a frame's payload. */
export function encodeOp(op: Op): Buffer {
  const key = Buffer.from(op.key, 'utf8');
  if (!op.value) {
    const out = Buffer.allocUnsafe(5 + key.length);
    out.writeUInt8(OP_DELETE, 0);
    out.writeUInt32BE(key.length, 1);
    key.copy(out, 5);
    return out;
  }
  const out = Buffer.allocUnsafe(9 + key.length + op.value.length);
  out.writeUInt8(OP_PUT, 0);
  out.writeUInt32BE(key.length, 1);
  key.copy(out, 5);
  out.writeUInt32BE(op.value.length, 5 + key.length);
  op.value.copy(out, 9 + key.length);
  return out;
}

/** A frame holding `ops` (encoded by encodeOp). */
export function frameOf(ops: Buffer[]): Buffer {
  const payload = ops.length === 1 ? ops[0]! : Buffer.concat(ops);
  const head = Buffer.allocUnsafe(FRAME_HEAD);
  head.writeUInt32BE(MAGIC, 0);
  head.writeUInt32BE(payload.length, 4);
  createHash('sha256').update(payload).digest().copy(head, 8, 0, 16);
  return Buffer.concat([head, payload]);
}

/**
 * The frames of a segment, in order, up to the first torn or damaged one; each op's value is given
 * as its offset and length in `buf`.
 */
export function readFrames(buf: Buffer): Array<{ start: number; end: number; ops: ParsedOp[] }> {
  const out: Array<{ start: number; end: number; ops: ParsedOp[] }> = [];
  let at = 0;
  while (at + FRAME_HEAD <= buf.length) {
    if (buf.readUInt32BE(at) !== MAGIC) break;
    const len = buf.readUInt32BE(at + 4);
    const end = at + FRAME_HEAD + len;
    if (end > buf.length) break;
    const start = at + FRAME_HEAD;
    if (
      !createHash('sha256')
        .update(buf.subarray(start, end))
        .digest()
        .subarray(0, 16)
        .equals(buf.subarray(at + 8, at + 24))
    )
      break;
    const ops: ParsedOp[] = [];
    let p = start;
    let ok = true;
    while (p < end) {
      if (p + 5 > end) {
        ok = false;
        break;
      }
      const kind = buf.readUInt8(p);
      const klen = buf.readUInt32BE(p + 1);
      if (p + 5 + klen > end) {
        ok = false;
        break;
      }
      const key = buf.toString('utf8', p + 5, p + 5 + klen);
      p += 5 + klen;
      if (kind === OP_PUT) {
        if (p + 4 > end) {
          ok = false;
          break;
        }
        const vlen = buf.readUInt32BE(p);
        if (p + 4 + vlen > end) {
          ok = false;
          break;
        }
        ops.push({ key, del: false, off: p + 4, len: vlen });
        p += 4 + vlen;
      } else if (kind === OP_DELETE) ops.push({ key, del: true, off: 0, len: 0 });
      else {
        ok = false;
        break;
      }
    }
    if (!ok) break;
    out.push({ start: at, end, ops });
    at = end;
  }
  return out;
}
