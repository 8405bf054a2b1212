/**
 * Snapshots of the whole store (issue 27; Vault's sys/storage/raft/snapshot, for every backend):
 * a stream of the records as stored, so barrier-encrypted (the seal config, which holds no secret,
 * and the wrapped master key records are stored outside the barrier and travel as they are), with a
 * checksum manifest. Restoring writes through the same Backend interface, so file and PostgreSQL
 * stores (and any later backend) take each other's snapshots.
 *
 * Point in time, writes going on: taking a snapshot opens a capture on the barrier. From then on,
 * the first write or delete of each path saves the record as it was (its pre-image) before the write
 * reaches storage. Writes that had begun before the capture opened are waited for; that instant is
 * the snapshot's index. The reader walks the store and, for any path the capture saw change, uses
 * the pre-image instead, so no write acknowledged after the index is in the snapshot and every write
 * acknowledged before it is.
 *
 * Layout (all integers uint32 big-endian):
 *   "KHSNAP01" | header length | header JSON
 *   records, sorted by path: path length | path (UTF-8) | value length | value
 *   "KHSNAPMF" | manifest length | manifest JSON {records, records_sha256, header_sha256}
 *   SHA-256 of every byte before it (32 bytes)
 * A truncated or altered file fails one of the checks and is refused before anything changes.
 */
import { createHash } from 'node:crypto';
import type { Backend } from './backend.js';

/** First bytes of a snapshot. */
export const SNAPSHOT_MAGIC = Buffer.from('KHSNAP01', 'latin1');
const MANIFEST_MAGIC = Buffer.from('KHSNAPMF', 'latin1');

/** What a snapshot says about itself. */
export interface SnapshotHeader {
  format: 1;
  /** Write index the snapshot stands at (the barrier's write sequence on the node that took it). */
  index: number;
  created: string;
  /** storage_id of the store it was taken from. */
  storage_id: string;
  /** Barrier key term in use when it was taken. */
  term: number;
  /** Backend it was taken from ("file", "postgresql", "inmem"). */
  backend: string;
  version: string;
}

/** The manifest at the end of a snapshot. */
export interface SnapshotManifest {
  records: number;
  records_sha256: string;
  header_sha256: string;
}

/** A parsed and verified snapshot. */
export interface Snapshot {
  header: SnapshotHeader;
  manifest: SnapshotManifest;
  records: Map<string, Buffer>;
  /** SHA-256 of the whole file before the trailer. */
  sha256: string;
}

/** Thrown for a snapshot that is truncated, altered or not a snapshot (the caller answers 400). */
export class SnapshotError extends Error {
  override name = 'SnapshotError';
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
}

/** Serialise records (sorted here) under `header`. */
export function encodeSnapshot(header: SnapshotHeader, records: Map<string, Buffer>): Buffer {
  const head = Buffer.from(JSON.stringify(header), 'utf8');
  const recHash = createHash('sha256');
  const parts: Buffer[] = [SNAPSHOT_MAGIC, u32(head.length), head];
  for (const path of [...records.keys()].sort()) {
    const k = Buffer.from(path, 'utf8');
    const v = records.get(path)!;
    const chunk = [u32(k.length), k, u32(v.length), v];
    for (const c of chunk) recHash.update(c);
    parts.push(...chunk);
  }
  const manifest: SnapshotManifest = {
    records: records.size,
    records_sha256: recHash.digest('hex'),
    header_sha256: createHash('sha256').update(head).digest('hex'),
  };
  const mf = Buffer.from(JSON.stringify(manifest), 'utf8');
  parts.push(MANIFEST_MAGIC, u32(mf.length), mf);
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash('sha256').update(body).digest()]);
}

/** Parse and verify a snapshot; throws SnapshotError naming what is wrong. */
export function decodeSnapshot(buf: Buffer): Snapshot {
  if (buf.length < SNAPSHOT_MAGIC.length + 4 + 32 || !buf.subarray(0, 8).equals(SNAPSHOT_MAGIC))
    throw new SnapshotError('not a keyhold snapshot (bad magic)');
  const body = buf.subarray(0, buf.length - 32);
  const sum = createHash('sha256').update(body).digest();
  if (!sum.equals(buf.subarray(buf.length - 32)))
    throw new SnapshotError('snapshot checksum mismatch: the file is truncated or altered');
  let off = 8;
  const need = (n: number) => {
    if (off + n > body.length) throw new SnapshotError('snapshot is truncated');
  };
  const readU32 = () => {
    need(4);
    const n = body.readUInt32BE(off);
    off += 4;
    return n;
  };
  const hlen = readU32();
  need(hlen);
  const headBytes = body.subarray(off, off + hlen);
  off += hlen;
  let header: SnapshotHeader;
  try {
    header = JSON.parse(headBytes.toString('utf8')) as SnapshotHeader;
  } catch {
    throw new SnapshotError('snapshot header is not JSON');
  }
  if (header.format !== 1) throw new SnapshotError(`snapshot format ${String(header.format)} is not supported`);
  const records = new Map<string, Buffer>();
  const recHash = createHash('sha256');
  const recStart = off;
  while (true) {
    need(8);
    if (body.subarray(off, off + 8).equals(MANIFEST_MAGIC)) break;
    const klen = readU32();
    need(klen);
    const key = body.subarray(off, off + klen).toString('utf8');
    off += klen;
    const vlen = readU32();
    need(vlen);
    records.set(key, Buffer.from(body.subarray(off, off + vlen)));
    off += vlen;
  }
  recHash.update(body.subarray(recStart, off));
  off += 8;
  const mlen = readU32();
  need(mlen);
  let manifest: SnapshotManifest;
  try {
    manifest = JSON.parse(body.subarray(off, off + mlen).toString('utf8')) as SnapshotManifest;
  } catch {
    throw new SnapshotError('snapshot manifest is not JSON');
  }
  if (off + mlen !== body.length) throw new SnapshotError('snapshot has bytes after its manifest');
  if (manifest.records !== records.size)
    throw new SnapshotError(`snapshot manifest counts ${manifest.records} records but holds ${records.size}`);
  if (manifest.records_sha256 !== recHash.digest('hex'))
    throw new SnapshotError('snapshot records do not match the manifest checksum');
  if (manifest.header_sha256 !== createHash('sha256').update(headBytes).digest('hex'))
    throw new SnapshotError('snapshot header does not match the manifest checksum');
  return { header, manifest, records, sha256: sum.toString('hex') };
}

/** Every key of a backend (walks folders). */
export async function backendKeys(backend: Backend, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const name of await backend.list(prefix)) {
    if (name.endsWith('/')) out.push(...(await backendKeys(backend, prefix + name)));
    else out.push(prefix + name);
  }
  return out;
}

/** Pre-images of the paths written since a capture opened (null: the path did not exist). */
export class SnapshotCapture {
  readonly before = new Map<string, Buffer | null>();
  private readonly reading = new Map<string, Promise<void>>();
  constructor(private readonly backend: Backend) {}
  /** Called before a write or delete of `path` reaches storage; resolves once its pre-image is saved. */
  beforeWrite(path: string): Promise<void> {
    // One read per path: a second write racing the first waits for the same pre-image.
    let p = this.reading.get(path);
    if (!p) {
      this.before.set(path, null);
      p = this.backend.get(path).then((v) => {
        if (v) this.before.set(path, v);
      });
      this.reading.set(path, p);
    }
    return p;
  }
  /** Every pre-image read finished. */
  async settled(): Promise<void> {
    await Promise.all(this.reading.values());
  }
}

/** Read the store as it was when `capture` opened: records outside any later write, plus pre-images. */
export async function readAtCapture(
  backend: Backend,
  capture: SnapshotCapture,
  skip: (key: string) => boolean = () => false,
): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const key of await backendKeys(backend)) {
    if (skip(key)) continue;
    const v = await backend.get(key);
    // Read first, then look: a path the capture saw change is taken from its pre-image.
    if (capture.before.has(key)) continue;
    if (v) out.set(key, v);
  }
  await capture.settled();
  for (const [key, v] of capture.before) if (v && !skip(key)) out.set(key, v);
  return out;
}

/** Make the backend hold exactly `records` (deletes keys not in it; `keep` keys are left alone). */
export async function applySnapshot(
  backend: Backend,
  records: Map<string, Buffer>,
  keep: (key: string) => boolean = () => false,
): Promise<{ written: number; deleted: number }> {
  let deleted = 0;
  for (const key of await backendKeys(backend)) {
    if (keep(key) || records.has(key)) continue;
    await backend.delete(key);
    deleted++;
  }
  // The seal config is written last: a crash before it leaves the old seal config in place.
  const order = [...records.keys()]
    .filter((k) => !keep(k))
    .sort((a, b) => (a === 'core/seal-config' ? 1 : b === 'core/seal-config' ? -1 : a < b ? -1 : 1));
  for (const key of order) await backend.put(key, records.get(key)!);
  return { written: order.length, deleted };
}
