/**
 * The record layout of barrier key terms after a rotation (`sys/rotate`). Term 1 keeps the
 * original layout (0x01 | nonce | ciphertext | tag), so a store that was never rotated is byte for
 * byte what it was; records sealed under a later term name it:
 *   0x02 | term (uint32, big-endian) | nonce(12) | ciphertext | tag(16)
 * The associated data is the record path, as for term 1. A wrong term byte only selects a wrong key,
 * which GCM's tag then refuses.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';

/** First byte of a record sealed under a term after the first. */
export const TERM_RECORD = 2;
const HEAD = 1 + 4;

/** Encrypt `plaintext` for `path` under the key of `term` (>= 2). */
export function sealTermRecord(key: Buffer, term: number, path: string, plaintext: Buffer, nonce: Buffer): Buffer {
  if (nonce.length !== 12) throw new Error('barrier: nonce must be 12 bytes');
  const c = createCipheriv('aes-256-gcm', key, nonce);
  c.setAAD(Buffer.from(path, 'utf8'));
  const body = c.update(plaintext);
  const fin = c.final();
  const head = Buffer.allocUnsafe(HEAD);
  head[0] = TERM_RECORD;
  head.writeUInt32BE(term, 1);
  return Buffer.concat([head, nonce, body, fin, c.getAuthTag()]);
}

/** The term a record was sealed under (1 for the original layout), or 0 when the record is malformed. */
export function termOfRecord(record: Buffer): number {
  if (record.length < 1) return 0;
  if (record[0] === 1) return 1;
  if (record[0] === TERM_RECORD && record.length >= HEAD + 12 + 16) return record.readUInt32BE(1);
  return 0;
}

/** Decrypt a term record read from `path` with its term's key; throws when tampered or swapped. */
export function openTermRecord(key: Buffer, path: string, record: Buffer): Buffer {
  if (record.length < HEAD + 12 + 16 || record[0] !== TERM_RECORD)
    throw new Error(`barrier: record at ${path} is malformed`);
  const nonce = record.subarray(HEAD, HEAD + 12);
  const d = createDecipheriv('aes-256-gcm', key, nonce);
  d.setAAD(Buffer.from(path, 'utf8'));
  d.setAuthTag(record.subarray(record.length - 16));
  try {
    return Buffer.concat([d.update(record.subarray(HEAD + 12, record.length - 16)), d.final()]);
  } catch {
    throw new Error(`barrier: record at ${path} failed authentication`);
  }
}
