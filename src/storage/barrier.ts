/**
 * The barrier: every record is sealed with AES-256-GCM under the barrier key, a fresh 96-bit nonce,
 * and the record's path as associated data (so records cannot be swapped between paths).
 * Record layout: 0x01 | nonce(12) | ciphertext | tag(16).
 *
 * Reads keep a bounded cache of recently opened records (plaintext, in this process's memory only,
 * dropped on seal): decrypting costs 4 µs a record, and a login reads three or four (role, secret
 * id, identity alias). Our own writes update it; writes by another process (a shared backend) reach
 * it through `forget(key)`, which the core calls before anything else on a change notification.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Backend, Storage } from './backend.js';
import { Lru } from './lru.js';

const VERSION = 1;

/** Encrypt `plaintext` for storage at `path`. */
export function sealRecord(key: Buffer, path: string, plaintext: Buffer, nonce: Buffer = randomBytes(12)): Buffer {
  if (nonce.length !== 12) throw new Error('barrier: nonce must be 12 bytes');
  const c = createCipheriv('aes-256-gcm', key, nonce);
  c.setAAD(Buffer.from(path, 'utf8'));
  const body = c.update(plaintext);
  const fin = c.final();
  return Buffer.concat([Buffer.from([VERSION]), nonce, body, fin, c.getAuthTag()]);
}

/** Decrypt a record read from `path`; throws when tampered, swapped or under another key. */
export function openRecord(key: Buffer, path: string, record: Buffer): Buffer {
  if (record.length < 1 + 12 + 16 || record[0] !== VERSION) throw new Error(`barrier: record at ${path} is malformed`);
  const nonce = record.subarray(1, 13);
  const tag = record.subarray(record.length - 16);
  const d = createDecipheriv('aes-256-gcm', key, nonce);
  d.setAAD(Buffer.from(path, 'utf8'));
  d.setAuthTag(tag);
  try {
    return Buffer.concat([d.update(record.subarray(13, record.length - 16)), d.final()]);
  } catch {
    throw new Error(`barrier: record at ${path} failed authentication`);
  }
}

/** Options of a Barrier. */
export interface BarrierOptions {
  /** Source of 12-byte nonces (default: randomBytes; the daemon passes a pooled CSPRNG source). */
  nonce?: (size: number) => Buffer;
  /** Bytes of opened records kept for reads (default 8 MiB; 0 turns the cache off). */
  cacheBytes?: number;
}

/** Paths whose last change is remembered for the read-fill rule (then it starts over). */
const CHANGES_KEPT = 4096;

/** Records larger than this are not cached (rare; they would push many small ones out). */
const CACHE_MAX_RECORD = 64 * 1024;

/** Storage seen through the barrier. Unusable until `unseal(key)`; `seal()` forgets the key. */
export class Barrier implements Storage {
  private key: Buffer | null = null;
  private readonly nonce: (size: number) => Buffer;
  private readonly cache: Lru<string, Buffer> | null;
  /**
   * Change numbers: a read may fill the cache only if nothing changed its path after the read began
   * (a write starting or finishing, a forget). `changed` keeps the last change per path, bounded; when
   * it is cleared, `floor` keeps reads begun before that from filling at all.
   */
  private seq = 0;
  private floor = 0;
  private readonly changed = new Map<string, number>();
  constructor(
    private readonly backend: Backend,
    opts: BarrierOptions = {},
  ) {
    this.nonce = opts.nonce ?? randomBytes;
    const bytes = opts.cacheBytes ?? 8 * 1024 * 1024;
    this.cache = bytes > 0 ? new Lru<string, Buffer>({ maxWeight: bytes, weigh: (k, v) => k.length + v.length + 64 }) : null;
  }
  get sealed(): boolean {
    return this.key === null;
  }
  unseal(barrierKey: Buffer): void {
    this.key = Buffer.from(barrierKey);
  }
  seal(): void {
    this.key?.fill(0);
    this.key = null;
    this.clearCache();
  }
  /** Another process changed `path`: the next read goes to the backend. */
  forget(path: string): void {
    if (!this.cache) return;
    if (this.changed.size >= CHANGES_KEPT) {
      this.changed.clear();
      this.floor = this.seq;
    }
    this.changed.set(path, ++this.seq);
    this.cache.delete(path);
  }
  /** Drop every cached record (changes may have been missed). */
  clearCache(): void {
    if (!this.cache) return;
    this.changed.clear();
    this.floor = ++this.seq;
    this.cache.clear();
  }
  private k(): Buffer {
    if (!this.key) throw new Error('barrier is sealed');
    return this.key;
  }
  async get(path: string): Promise<Buffer | null> {
    const key = this.k();
    const hit = this.cache?.get(path);
    // A copy: callers own what they read.
    if (hit) return Buffer.from(hit);
    const began = this.seq;
    const rec = await this.backend.get(path);
    if (!rec) return null;
    const plain = openRecord(key, path, rec);
    if (this.cache && plain.length <= CACHE_MAX_RECORD && began >= this.floor && (this.changed.get(path) ?? 0) <= began) this.cache.set(path, Buffer.from(plain));
    return plain;
  }
  async put(path: string, value: Buffer): Promise<void> {
    const sealed = sealRecord(this.k(), path, value, this.nonce(12));
    const copy = this.cache && value.length <= CACHE_MAX_RECORD ? Buffer.from(value) : null;
    // Cached only once stored (a failed write must not be readable). A read overlapping the write may
    // have got the old value from the backend: the changes at both ends keep it out of the cache.
    this.forget(path);
    await this.backend.put(path, sealed);
    this.forget(path);
    if (copy) this.cache!.set(path, copy);
  }
  async delete(path: string): Promise<void> {
    this.k();
    this.forget(path);
    await this.backend.delete(path);
    this.forget(path);
  }
  async list(prefix: string): Promise<string[]> {
    this.k();
    return this.backend.list(prefix);
  }
}
