/**
 * The barrier: every record is sealed with AES-256-GCM under the barrier key, a fresh 96-bit nonce,
 * and the record's path as associated data (so records cannot be swapped between paths).
 * Record layout: 0x01 | nonce(12) | ciphertext | tag(16).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Backend, Storage } from './backend.js';

const VERSION = 1;

/** Encrypt `plaintext` for storage at `path`. */
export function sealRecord(key: Buffer, path: string, plaintext: Buffer): Buffer {
  const nonce = randomBytes(12);
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

/** Storage seen through the barrier. Unusable until `unseal(key)`; `seal()` forgets the key. */
export class Barrier implements Storage {
  private key: Buffer | null = null;
  constructor(private readonly backend: Backend) {}
  get sealed(): boolean {
    return this.key === null;
  }
  unseal(barrierKey: Buffer): void {
    this.key = Buffer.from(barrierKey);
  }
  seal(): void {
    this.key?.fill(0);
    this.key = null;
  }
  private k(): Buffer {
    if (!this.key) throw new Error('barrier is sealed');
    return this.key;
  }
  async get(path: string): Promise<Buffer | null> {
    const rec = await this.backend.get(path);
    return rec ? openRecord(this.k(), path, rec) : null;
  }
  async put(path: string, value: Buffer): Promise<void> {
    await this.backend.put(path, sealRecord(this.k(), path, value));
  }
  async delete(path: string): Promise<void> {
    this.k();
    await this.backend.delete(path);
  }
  async list(prefix: string): Promise<string[]> {
    this.k();
    return this.backend.list(prefix);
  }
}
