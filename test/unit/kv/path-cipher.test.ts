import { describe, expect, it } from 'vitest';
import { ctr } from '@noble/ciphers/aes.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { MAX_SEGMENT_BYTES, PathCipher } from '../../../src/engines/kv/path-cipher.js';

const secret = Buffer.alloc(32, 7);
const enc = new TextEncoder();

/** The construction recomputed with @noble (an independent implementation of HMAC-SHA256 and AES-CTR). */
function nobleName(parent: string, segment: string): string {
  const encKey = hmac(sha256, secret, enc.encode('keyhold kv name encryption'));
  const macKey = hmac(sha256, secret, enc.encode('keyhold kv name authentication'));
  const pt = enc.encode(segment);
  const iv = hmac(sha256, macKey, new Uint8Array([...enc.encode(parent), 0, ...pt])).slice(0, 16);
  const ct = ctr(encKey, iv).encrypt(pt);
  return Buffer.concat([iv, ct]).toString('base64url');
}

describe('PathCipher', () => {
  const c = new PathCipher(secret);

  it('matches the construction recomputed with @noble', () => {
    expect(c.encryptSegment('', 'app')).toBe(nobleName('', 'app'));
    expect(c.encryptSegment('app/db', 'pässwörd')).toBe(nobleName('app/db', 'pässwörd'));
  });

  it('round-trips segments, including unicode and dots', () => {
    for (const s of ['a', '..', '.', 'x y', 'ünï/codé'.replace('/', ''), 'p'.repeat(MAX_SEGMENT_BYTES)]) {
      expect(c.decryptSegment('p', c.encryptSegment('p', s))).toBe(s);
    }
  });

  it('is deterministic but depends on the parent folder', () => {
    expect(c.encryptSegment('a', 'x')).toBe(c.encryptSegment('a', 'x'));
    expect(c.encryptSegment('a', 'x')).not.toBe(c.encryptSegment('b', 'x'));
  });

  it('hides the segment text', () => {
    const name = c.encryptSegment('', 'database-password');
    expect(name).not.toContain('database');
    expect(Buffer.from(name, 'base64url').toString('latin1')).not.toContain('database');
  });

  it('rejects a name decrypted under the wrong parent or altered', () => {
    const name = c.encryptSegment('a', 'x');
    expect(c.decryptSegment('b', name)).toBeNull();
    const raw = Buffer.from(name, 'base64url');
    raw[raw.length - 1] ^= 1;
    expect(c.decryptSegment('a', raw.toString('base64url'))).toBeNull();
    expect(c.decryptSegment('a', 'not-ours')).toBeNull();
  });

  it('rejects names under another key', () => {
    const other = new PathCipher(Buffer.alloc(32, 8));
    expect(other.decryptSegment('', c.encryptSegment('', 'x'))).toBeNull();
  });

  it('keeps the longest allowed segment within a 255-byte file name', () => {
    const name = c.encryptSegment('', '\u{10FFFF}'.repeat(MAX_SEGMENT_BYTES / 4));
    expect(name.length + 1).toBeLessThanOrEqual(255);
    expect(c.encryptSegment('', 'é'.repeat(MAX_SEGMENT_BYTES / 2)).length + 1).toBeLessThanOrEqual(255);
  });

  it('derives different version-record ids per path', () => {
    expect(c.idOf('a')).not.toBe(c.idOf('b'));
    expect(c.idOf('a')).toMatch(/^[0-9a-f]{40}$/);
  });
});
