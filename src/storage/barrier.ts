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
import { openTermRecord, sealTermRecord, termOfRecord } from './barrier-terms.js';

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

/** Timing hook (telemetry): an operation began at `t0` (performance.now()); a put's backend write at `tCommit`. */
export type BarrierObserver = (op: 'get' | 'put' | 'delete' | 'list', t0: number, tCommit?: number) => void;

/** Storage seen through the barrier. Unusable until `unseal(key)`; `seal()` forgets the key. */
export class Barrier implements Storage {
  private key: Buffer | null = null;
  /** Set by the daemon when telemetry is on (issue 27). */
  observer: BarrierObserver | null = null;
  /**
   * Key terms after a rotation (issue 27, storage/keyring-rotation.ts): every term's key by number,
   * null while only term 1 exists (then `key` is term 1's). New writes use `term`.
   */
  private terms: Map<number, Buffer> | null = null;
  private term = 1;
  /** Records sealed under the active term since it was installed (key-status `encryptions`). */
  encryptions = 0;
  /** Called when a record names a term this process does not know yet (another node rotated): reload the terms. */
  onUnknownTerm: ((term: number) => Promise<void>) | null = null;
  /** Snapshot capture (issue 27, storage/snapshot.ts): told of each write before it reaches storage. */
  private capture: { beforeWrite(path: string): Promise<void> } | null = null;
  /** Writes in progress by sequence number (a capture waits for those begun before it opened). */
  private writeSeq = 0;
  private readonly writing = new Set<number>();
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
    this.cache =
      bytes > 0 ? new Lru<string, Buffer>({ maxWeight: bytes, weigh: (k, v) => k.length + v.length + 64 }) : null;
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
    if (this.terms) for (const k of this.terms.values()) k.fill(0);
    this.terms = null;
    this.term = 1;
    this.clearCache();
  }
  /** The key of term 1 (which also seals the keyring of later terms). */
  firstTermKey(): Buffer {
    return this.terms?.get(1) ?? this.k();
  }
  /** Active term (1 until the first rotation). */
  get activeTerm(): number {
    return this.term;
  }
  /** Install the keys of every term (term 1 included) and write new records under `active`. */
  installTerms(keys: Map<number, Buffer>, active: number): void {
    const first = keys.get(1);
    const next = keys.get(active);
    if (!first || !next) throw new Error('barrier: a keyring needs term 1 and its active term');
    if (active !== this.term) this.encryptions = 0;
    const copy = new Map([...keys].map(([t, k]) => [t, Buffer.from(k)]));
    if (this.terms) for (const k of this.terms.values()) k.fill(0);
    this.key?.fill(0);
    this.terms = copy;
    this.key = copy.get(active)!;
    this.term = active;
  }
  /** Back to term 1 alone (the stored keyring has no later terms, e.g. after restoring an older snapshot). */
  resetTerms(): void {
    if (!this.terms) return;
    const first = Buffer.from(this.terms.get(1)!);
    for (const k of this.terms.values()) k.fill(0);
    this.terms = null;
    this.key = first;
    this.term = 1;
    this.encryptions = 0;
  }
  private async open(path: string, rec: Buffer): Promise<Buffer> {
    const term = termOfRecord(rec);
    if (term <= 1) return openRecord(term === 1 ? this.firstTermKey() : this.k(), path, rec);
    let key = this.terms?.get(term);
    if (!key && this.onUnknownTerm) {
      await this.onUnknownTerm(term);
      key = this.terms?.get(term);
    }
    if (!key)
      throw new Error(`barrier: record at ${path} is sealed under key term ${term}, which this keyring does not have`);
    return openTermRecord(key, path, rec);
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
    const t0 = this.observer ? performance.now() : 0;
    const rec = await this.backend.get(path);
    if (t0) this.observer!('get', t0);
    if (!rec) return null;
    const plain = rec[0] === 1 && !this.terms ? openRecord(key, path, rec) : await this.open(path, rec);
    if (this.cache && plain.length <= CACHE_MAX_RECORD && began >= this.floor && (this.changed.get(path) ?? 0) <= began)
      this.cache.set(path, Buffer.from(plain));
    return plain;
  }
  /** Open a snapshot capture; resolves with the write index once every write begun before it has finished. */
  async openCapture(c: { beforeWrite(path: string): Promise<void> }): Promise<number> {
    if (this.capture) throw new Error('a snapshot is already being taken');
    this.capture = c;
    const upTo = this.writeSeq;
    while ([...this.writing].some((id) => id <= upTo)) await new Promise((r) => setTimeout(r, 1));
    return upTo;
  }
  /** Close the capture. */
  closeCapture(): void {
    this.capture = null;
  }
  async put(path: string, value: Buffer): Promise<void> {
    const id = ++this.writeSeq;
    this.writing.add(id);
    try {
      if (this.capture) await this.capture.beforeWrite(path);
      await this.putNow(path, value);
    } finally {
      this.writing.delete(id);
    }
  }
  private async putNow(path: string, value: Buffer): Promise<void> {
    const t0 = this.observer ? performance.now() : 0;
    const sealed =
      this.term === 1
        ? sealRecord(this.k(), path, value, this.nonce(12))
        : sealTermRecord(this.k(), this.term, path, value, this.nonce(12));
    this.encryptions++;
    const copy = this.cache && value.length <= CACHE_MAX_RECORD ? Buffer.from(value) : null;
    // Cached only once stored (a failed write must not be readable). A read overlapping the write may
    // have got the old value from the backend: the changes at both ends keep it out of the cache.
    this.forget(path);
    const tCommit = t0 ? performance.now() : 0;
    await this.backend.put(path, sealed);
    if (t0) this.observer!('put', t0, tCommit);
    this.forget(path);
    if (copy) this.cache!.set(path, copy);
  }
  async delete(path: string): Promise<void> {
    this.k();
    const id = ++this.writeSeq;
    this.writing.add(id);
    try {
      if (this.capture) await this.capture.beforeWrite(path);
      await this.deleteNow(path);
    } finally {
      this.writing.delete(id);
    }
  }
  private async deleteNow(path: string): Promise<void> {
    const t0 = this.observer ? performance.now() : 0;
    this.forget(path);
    await this.backend.delete(path);
    this.forget(path);
    if (t0) this.observer!('delete', t0);
  }
  async list(prefix: string): Promise<string[]> {
    this.k();
    if (!this.observer) return this.backend.list(prefix);
    const t0 = performance.now();
    const out = await this.backend.list(prefix);
    this.observer('list', t0);
    return out;
  }
}
