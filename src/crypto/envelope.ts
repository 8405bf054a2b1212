/**
 * Envelope stream format: any amount of data encrypted locally with a data key in fixed-size chunks
 * of AES-256-GCM, in constant memory. Each chunk is authenticated together with a digest of the
 * header, its index and a final-chunk flag, so tampering, reordering, truncation and appended data
 * are all detected. The header carries the wrapped data key (a transit ciphertext).
 *
 * Layout (all integers big-endian):
 *   header  "KHEV" | version u8 = 1 | cipher u8 = 1 (AES-256-GCM) | chunk_size u32 | nonce_prefix 8 bytes
 *           | wrapped_len u16 | wrapped key (ASCII, e.g. "vault:v1:...")
 *   chunk i ciphertext (chunk_size bytes; the last chunk shorter, possibly empty) | tag 16 bytes
 *   nonce_i = nonce_prefix || u32(i);  aad_i = SHA-256(header) || u32(i) || u8(final)
 * Only the last chunk is shorter than chunk_size and only it has final = 1.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Transform, type TransformCallback } from 'node:stream';
import type { Worker } from 'node:worker_threads';

/** Magic bytes at the start of every envelope. */
export const ENVELOPE_MAGIC = Buffer.from('KHEV', 'ascii');
/** Default plaintext bytes per chunk (1 MiB). */
export const DEFAULT_CHUNK_SIZE = 1 << 20;
/** Bounds on chunk size accepted when reading (keeps memory bounded against hostile headers). */
export const CHUNK_SIZE_LIMITS = { min: 1024, max: 16 << 20 } as const;

const VERSION = 1;
const CIPHER_AES256GCM = 1;
const TAG = 16;
const FIXED = 20;
const MAX_WRAPPED = 8192;
const MAX_CHUNKS = 0xffffffff;

/** An envelope that cannot be read (bad header, failed authentication, truncation). */
export class EnvelopeError extends Error {}

/** Parsed header fields. */
export interface EnvelopeHeader {
  chunkSize: number;
  noncePrefix: Buffer;
  wrappedKey: string;
  /** The header bytes as written (authenticated through their digest). */
  bytes: Buffer;
}

/** Build a header for a wrapped data key. */
export function buildHeader(
  wrappedKey: string,
  chunkSize = DEFAULT_CHUNK_SIZE,
  noncePrefix: Buffer = randomBytes(8),
): EnvelopeHeader {
  const wk = Buffer.from(wrappedKey, 'ascii');
  if (wk.length === 0 || wk.length > MAX_WRAPPED)
    throw new EnvelopeError(`wrapped key must be 1..${MAX_WRAPPED} bytes`);
  if (chunkSize < CHUNK_SIZE_LIMITS.min || chunkSize > CHUNK_SIZE_LIMITS.max)
    throw new EnvelopeError('chunk size out of range');
  const h = Buffer.alloc(FIXED + wk.length);
  ENVELOPE_MAGIC.copy(h, 0);
  h[4] = VERSION;
  h[5] = CIPHER_AES256GCM;
  h.writeUInt32BE(chunkSize, 6);
  noncePrefix.copy(h, 10, 0, 8);
  h.writeUInt16BE(wk.length, 18);
  wk.copy(h, FIXED);
  return { chunkSize, noncePrefix: Buffer.from(noncePrefix.subarray(0, 8)), wrappedKey, bytes: h };
}

/** Parse a header from the start of `buf`; null when more bytes are needed. */
export function parseHeader(buf: Buffer): EnvelopeHeader | null {
  if (buf.length < 4) {
    if (!ENVELOPE_MAGIC.subarray(0, buf.length).equals(buf))
      throw new EnvelopeError('not a keyhold envelope (bad magic)');
    return null;
  }
  if (!buf.subarray(0, 4).equals(ENVELOPE_MAGIC)) throw new EnvelopeError('not a keyhold envelope (bad magic)');
  if (buf.length < FIXED) return null;
  if (buf[4] !== VERSION) throw new EnvelopeError(`unsupported envelope version ${buf[4]}`);
  if (buf[5] !== CIPHER_AES256GCM) throw new EnvelopeError(`unsupported envelope cipher ${buf[5]}`);
  const chunkSize = buf.readUInt32BE(6);
  if (chunkSize < CHUNK_SIZE_LIMITS.min || chunkSize > CHUNK_SIZE_LIMITS.max)
    throw new EnvelopeError(`envelope chunk size ${chunkSize} out of range`);
  const wl = buf.readUInt16BE(18);
  if (wl === 0 || wl > MAX_WRAPPED) throw new EnvelopeError('envelope wrapped-key length out of range');
  if (buf.length < FIXED + wl) return null;
  const bytes = Buffer.from(buf.subarray(0, FIXED + wl));
  return {
    chunkSize,
    noncePrefix: Buffer.from(buf.subarray(10, 18)),
    wrappedKey: bytes.subarray(FIXED).toString('ascii'),
    bytes,
  };
}

function nonceFor(prefix: Buffer, index: number): Buffer {
  const n = Buffer.alloc(12);
  prefix.copy(n, 0, 0, 8);
  n.writeUInt32BE(index, 8);
  return n;
}

function aadFor(headerDigest: Buffer, index: number, final: boolean): Buffer {
  const a = Buffer.alloc(37);
  headerDigest.copy(a, 0);
  a.writeUInt32BE(index, 32);
  a[36] = final ? 1 : 0;
  return a;
}

/** Seal (encrypt) one chunk: `ct || tag`. */
export function sealChunk(
  key: Buffer,
  noncePrefix: Buffer,
  headerDigest: Buffer,
  index: number,
  final: boolean,
  data: Buffer,
): Buffer[] {
  const c = createCipheriv('aes-256-gcm', key, nonceFor(noncePrefix, index));
  c.setAAD(aadFor(headerDigest, index, final));
  const ct = c.update(data);
  c.final();
  return [ct, c.getAuthTag()];
}

/** Open (decrypt) one chunk `ct || tag`; null when authentication fails. */
export function openChunk(
  key: Buffer,
  noncePrefix: Buffer,
  headerDigest: Buffer,
  index: number,
  final: boolean,
  data: Buffer,
): Buffer | null {
  const d = createDecipheriv('aes-256-gcm', key, nonceFor(noncePrefix, index));
  d.setAAD(aadFor(headerDigest, index, final));
  d.setAuthTag(data.subarray(data.length - TAG));
  const pt = d.update(data.subarray(0, data.length - TAG));
  try {
    d.final();
  } catch {
    return null;
  }
  return pt;
}

// The worker is a self-contained CommonJS script (eval), so it runs the same from dist/ and from
// sources under test. It repeats the nonce/AAD layout documented at the top of this file.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const c = require('node:crypto');
const key = Buffer.from(workerData.key);
const prefix = Buffer.from(workerData.prefix);
const digest = Buffer.from(workerData.digest);
const owned = (b) => {
  if (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength) return b;
  const o = Buffer.allocUnsafeSlow(b.length); b.copy(o); return o;
};
// Chunks arrive as transferred buffers: garbage here is almost all external memory, which V8 collects
// late (tens of MB). A small collection every few chunks keeps the worker's footprint flat.
let collect = null;
try { require('node:v8').setFlagsFromString('--expose-gc'); collect = require('node:vm').runInNewContext('gc'); } catch {}
let jobs = 0;
parentPort.on('message', (m) => {
  if (collect && ++jobs % 8 === 0) collect({ type: 'minor' });
  if (m === 'close') { key.fill(0); process.exit(0); }
  const data = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength);
  const nonce = Buffer.alloc(12); prefix.copy(nonce, 0, 0, 8); nonce.writeUInt32BE(m.index, 8);
  const aad = Buffer.alloc(37); digest.copy(aad, 0); aad.writeUInt32BE(m.index, 32); aad[36] = m.final ? 1 : 0;
  if (m.seal) {
    const x = c.createCipheriv('aes-256-gcm', key, nonce); x.setAAD(aad);
    const ct = owned(x.update(data)); x.final();
    parentPort.postMessage({ id: m.id, out: ct, tag: x.getAuthTag() }, [ct.buffer]);
  } else {
    const x = c.createDecipheriv('aes-256-gcm', key, nonce); x.setAAD(aad); x.setAuthTag(data.subarray(data.length - 16));
    const pt = owned(x.update(data.subarray(0, data.length - 16)));
    try { x.final(); } catch { parentPort.postMessage({ id: m.id, fail: true }); return; }
    parentPort.postMessage({ id: m.id, out: pt }, [pt.buffer]);
  }
});`;

/** Whole-ArrayBuffer ownership lets a chunk move to a worker without copying. */
function owned(b: Buffer): Buffer {
  if (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength) return b;
  // Never Buffer.from here: small copies come from the shared pool, which must not be transferred.
  const o = Buffer.allocUnsafeSlow(b.length);
  b.copy(o);
  return o;
}

interface Job {
  resolve: (out: Buffer[]) => void;
  reject: (e: Error) => void;
}

/**
 * Runs chunk seal/open jobs in order: on worker threads once the input proves large (AES-GCM is
 * about half as fast as AES-CTR per core, so using the other cores keeps up with `openssl enc`),
 * in this thread otherwise. Results are consumed strictly in submission order.
 */
class ChunkEngine {
  private workers: Worker[] = [];
  private starting: Promise<void> | null = null;
  private readonly jobs = new Map<number, Job>();
  private readonly queue: Promise<Buffer[]>[] = [];
  private nextId = 0;
  private rr = 0;
  private failed: Error | null = null;
  readonly window: number;
  private readonly threads: number;

  constructor(
    private readonly key: Buffer,
    private readonly noncePrefix: Buffer,
    private readonly digest: Buffer,
    private readonly seal: boolean,
    threads: number,
  ) {
    this.threads = threads;
    this.window = Math.max(2, threads * 2);
  }

  /** Number of submitted, not yet consumed jobs. */
  get pending(): number {
    return this.queue.length;
  }

  private async start(): Promise<void> {
    const { Worker } = await import('node:worker_threads');
    const workerData = { key: this.key, prefix: this.noncePrefix, digest: this.digest };
    for (let i = 0; i < this.threads; i++) {
      const w = new Worker(WORKER_SOURCE, { eval: true, workerData });
      w.on('message', (m: { id: number; out?: Uint8Array; tag?: Uint8Array; fail?: boolean }) => {
        const job = this.jobs.get(m.id);
        if (!job) return;
        this.jobs.delete(m.id);
        if (m.fail) job.reject(new EnvelopeError('auth'));
        else {
          const out = [Buffer.from(m.out!.buffer, m.out!.byteOffset, m.out!.byteLength)];
          if (m.tag) out.push(Buffer.from(m.tag.buffer, m.tag.byteOffset, m.tag.byteLength));
          job.resolve(out);
        }
      });
      w.on('error', (e) => this.abort(e));
      this.workers.push(w);
    }
  }

  private abort(e: Error): void {
    this.failed = e;
    for (const j of this.jobs.values()) j.reject(e);
    this.jobs.clear();
  }

  /** Queue a chunk; `parallel` allows worker threads for it. */
  async submit(index: number, final: boolean, data: Buffer, parallel: boolean): Promise<void> {
    if (this.failed) throw this.failed;
    if (parallel && this.threads > 0 && !this.starting) this.starting = this.start();
    // Slot 0 of the rotation is this thread, the others are workers.
    const slot = this.starting ? this.rr++ % (this.threads + 1) : 0;
    if (slot > 0) {
      await this.starting;
      const data2 = owned(data);
      const id = this.nextId++;
      const p = new Promise<Buffer[]>((resolve, reject) => this.jobs.set(id, { resolve, reject }));
      p.catch(() => undefined);
      const w = this.workers[slot - 1]!;
      w.postMessage({ id, index, final, seal: this.seal, data: data2 }, [data2.buffer as ArrayBuffer]);
      this.queue.push(p);
      return;
    }
    if (this.seal)
      this.queue.push(Promise.resolve(sealChunk(this.key, this.noncePrefix, this.digest, index, final, data)));
    else {
      const pt = openChunk(this.key, this.noncePrefix, this.digest, index, final, data);
      const p = pt ? Promise.resolve([pt]) : Promise.reject(new EnvelopeError('auth'));
      p.catch(() => undefined);
      this.queue.push(p);
    }
  }

  /** The oldest job's output. */
  next(): Promise<Buffer[]> {
    return this.queue.shift()!;
  }

  /** Stop the workers and wipe the key. */
  close(): void {
    for (const w of this.workers) {
      w.postMessage('close');
      void w.terminate();
    }
    this.workers = [];
    this.key.fill(0);
  }
}

/** How many worker threads envelope streams use besides this one (1 on multi-core machines; KEYHOLD_ENVELOPE_THREADS overrides). */
export function envelopeThreads(): number {
  const forced = process.env.KEYHOLD_ENVELOPE_THREADS;
  if (forced !== undefined && /^\d+$/.test(forced)) return Math.min(8, Number(forced));
  // One worker plus this thread doubles AES-GCM throughput; more workers cost ~15 MB of RSS each.
  return availableParallelism() > 1 ? 1 : 0;
}

/** Encrypts a byte stream into an envelope (header first). The data key must be 32 bytes. */
export class EnvelopeEncryptor extends Transform {
  private readonly engine: ChunkEngine;
  private buf: Buffer;
  private fill = 0;
  private index = 0;
  private started = false;
  private readonly chunkSize: number;

  constructor(
    key: Buffer,
    private readonly header: EnvelopeHeader,
    opts: { threads?: number } = {},
  ) {
    super({ readableHighWaterMark: header.chunkSize + TAG, writableHighWaterMark: header.chunkSize });
    if (key.length !== 32) throw new EnvelopeError('data key must be 32 bytes');
    const digest = createHash('sha256').update(header.bytes).digest();
    this.engine = new ChunkEngine(
      Buffer.from(key),
      header.noncePrefix,
      digest,
      true,
      opts.threads ?? envelopeThreads(),
    );
    key.fill(0);
    this.chunkSize = header.chunkSize;
    this.buf = Buffer.allocUnsafeSlow(header.chunkSize);
  }

  private async sealNext(data: Buffer, final: boolean): Promise<void> {
    if (this.index >= MAX_CHUNKS) throw new EnvelopeError('envelope too large for its chunk size');
    // Worker threads only once a second full chunk shows the input is large.
    await this.engine.submit(this.index, final, data, this.index >= 1);
    this.index++;
    while (this.engine.pending >= this.engine.window) for (const b of await this.engine.next()) this.push(b);
  }

  private async ingest(chunk: Buffer): Promise<void> {
    if (!this.started) {
      this.started = true;
      this.push(this.header.bytes);
    }
    let off = 0;
    // Whole chunks straight from the source (file reads of chunk_size) need no copy.
    while (this.fill === 0 && chunk.length - off >= this.chunkSize) {
      await this.sealNext(
        off === 0 && chunk.length === this.chunkSize ? chunk : chunk.subarray(off, off + this.chunkSize),
        false,
      );
      off += this.chunkSize;
    }
    while (off < chunk.length) {
      const n = Math.min(chunk.length - off, this.chunkSize - this.fill);
      chunk.copy(this.buf, this.fill, off, off + n);
      this.fill += n;
      off += n;
      if (this.fill === this.chunkSize) {
        // A full chunk is never the final one (the final chunk is shorter, possibly empty).
        const full = this.buf;
        this.buf = Buffer.allocUnsafeSlow(this.chunkSize);
        this.fill = 0;
        await this.sealNext(full, false);
      }
    }
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.ingest(chunk).then(
      () => cb(),
      (e) => cb(e as Error),
    );
  }

  override _flush(cb: TransformCallback): void {
    (async () => {
      if (!this.started) {
        this.started = true;
        this.push(this.header.bytes);
      }
      await this.sealNext(this.buf.subarray(0, this.fill), true);
      while (this.engine.pending) for (const b of await this.engine.next()) this.push(b);
    })().then(
      () => {
        this.engine.close();
        cb();
      },
      (e) => {
        this.engine.close();
        cb(e as Error);
      },
    );
  }

  override _destroy(err: Error | null, cb: (error: Error | null) => void): void {
    this.engine.close();
    cb(err);
  }
}

/** Decrypts an envelope; `unwrap` turns the header's wrapped key into the 32-byte data key. */
export class EnvelopeDecryptor extends Transform {
  private header: EnvelopeHeader | null = null;
  private pending: Buffer[] = [];
  private pendingLen = 0;
  private engine: ChunkEngine | null = null;
  private buf: Buffer | null = null;
  private fill = 0;
  private index = 0;
  private readonly threads: number;

  constructor(
    private readonly unwrap: (wrappedKey: string) => Promise<Buffer>,
    opts: { threads?: number } = {},
  ) {
    super({ writableHighWaterMark: DEFAULT_CHUNK_SIZE, readableHighWaterMark: DEFAULT_CHUNK_SIZE });
    this.threads = opts.threads ?? envelopeThreads();
  }

  private async begin(): Promise<Buffer | null> {
    const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    const h = parseHeader(all);
    if (!h) {
      this.pending = [all];
      return null;
    }
    this.pending = [];
    this.pendingLen = 0;
    const key = await this.unwrap(h.wrappedKey);
    if (key.length !== 32) throw new EnvelopeError('data key must be 32 bytes');
    this.header = h;
    const digest = createHash('sha256').update(h.bytes).digest();
    this.engine = new ChunkEngine(Buffer.from(key), h.noncePrefix, digest, false, this.threads);
    key.fill(0);
    this.buf = Buffer.allocUnsafeSlow(h.chunkSize + TAG);
    return all.subarray(h.bytes.length);
  }

  private async drain(all: boolean): Promise<void> {
    const e = this.engine!;
    while (e.pending && (all || e.pending >= e.window)) {
      const at = this.index - e.pending;
      let out: Buffer[];
      try {
        out = await e.next();
      } catch (err) {
        if (!(err instanceof EnvelopeError)) throw err;
        throw new EnvelopeError(
          `envelope chunk ${at} failed authentication (tampered, reordered, truncated or wrong key)`,
        );
      }
      for (const b of out) this.push(b);
    }
  }

  private async open(data: Buffer, final: boolean): Promise<void> {
    if (data.length < TAG) throw new EnvelopeError('envelope truncated (incomplete final chunk)');
    await this.engine!.submit(this.index, final, data, this.index >= 1);
    this.index++;
    await this.drain(false);
  }

  private async consume(chunk: Buffer): Promise<void> {
    let off = 0;
    const size = this.buf!.length;
    while (off < chunk.length) {
      const n = Math.min(chunk.length - off, size - this.fill);
      chunk.copy(this.buf!, this.fill, off, off + n);
      this.fill += n;
      off += n;
      if (this.fill === size) {
        const full = this.buf!;
        this.buf = Buffer.allocUnsafeSlow(size);
        this.fill = 0;
        await this.open(full, false);
      }
    }
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    (async () => {
      if (!this.header) {
        this.pending.push(chunk);
        this.pendingLen += chunk.length;
        const rest = await this.begin();
        if (rest && rest.length) await this.consume(rest);
        return;
      }
      await this.consume(chunk);
    })().then(
      () => cb(),
      (e) => cb(e as Error),
    );
  }

  override _flush(cb: TransformCallback): void {
    (async () => {
      if (!this.header)
        throw new EnvelopeError(
          this.pendingLen === 0 ? 'empty input: not a keyhold envelope' : 'envelope truncated (incomplete header)',
        );
      // A full chunk is never final: input ending on a chunk boundary lost its final chunk.
      if (this.fill === 0) {
        await this.drain(true);
        throw new EnvelopeError('envelope truncated (final chunk missing)');
      }
      await this.open(this.buf!.subarray(0, this.fill), true);
      await this.drain(true);
    })().then(
      () => {
        this.engine?.close();
        cb();
      },
      (e) => {
        this.engine?.close();
        cb(e as Error);
      },
    );
  }

  override _destroy(err: Error | null, cb: (error: Error | null) => void): void {
    this.engine?.close();
    cb(err);
  }
}
