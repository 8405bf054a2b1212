/**
 * The AEAD ciphers of the symmetric key types (reference transit-wire.md section 4.2): AES-GCM with a
 * 96-bit nonce and ChaCha20-Poly1305 over node:crypto; XChaCha20-Poly1305 (OpenBao's type) over
 * @noble/ciphers, which node:crypto lacks. Tags are 16 bytes, appended to the ciphertext.
 */
import { createCipheriv, createDecipheriv, type CipherGCMTypes } from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { invalid } from '../../../framework/errors.js';

/** AEAD suites by key type. */
export type AeadSuite = 'aes128-gcm96' | 'aes256-gcm96' | 'chacha20-poly1305' | 'xchacha20-poly1305';

/** Facts per suite: node cipher name (null: @noble), nonce size, Go's authentication-failure text. */
export const AEAD_SUITES: Readonly<
  Record<AeadSuite, { node: string | null; keyBytes: number; nonceBytes: number; authError: string }>
> = {
  'aes128-gcm96': {
    node: 'aes-128-gcm',
    keyBytes: 16,
    nonceBytes: 12,
    authError: 'cipher: message authentication failed',
  },
  'aes256-gcm96': {
    node: 'aes-256-gcm',
    keyBytes: 32,
    nonceBytes: 12,
    authError: 'cipher: message authentication failed',
  },
  'chacha20-poly1305': {
    node: 'chacha20-poly1305',
    keyBytes: 32,
    nonceBytes: 12,
    authError: 'chacha20poly1305: message authentication failed',
  },
  'xchacha20-poly1305': {
    node: null,
    keyBytes: 32,
    nonceBytes: 24,
    authError: 'chacha20poly1305: message authentication failed',
  },
};

/** True when `type` names an AEAD suite. */
export function isAeadSuite(type: string): type is AeadSuite {
  return Object.prototype.hasOwnProperty.call(AEAD_SUITES, type);
}

const TAG = 16;

/** Encrypt: returns `ct || tag`, or `nonce || ct || tag` when `withNonce`. */
export function aeadSeal(
  suite: AeadSuite,
  key: Buffer,
  nonce: Buffer,
  plaintext: Buffer,
  aad?: Buffer,
  withNonce = false,
): Buffer {
  const s = AEAD_SUITES[suite];
  if (s.node === null) {
    const sealed = xchacha20poly1305(key, nonce, aad && aad.length ? aad : undefined).encrypt(plaintext);
    return withNonce ? Buffer.concat([nonce, sealed]) : Buffer.from(sealed);
  }
  const c = createCipheriv(s.node as CipherGCMTypes, key, nonce, { authTagLength: TAG });
  if (aad && aad.length) c.setAAD(aad, { plaintextLength: plaintext.length });
  const a = c.update(plaintext);
  const b = c.final();
  return withNonce ? Buffer.concat([nonce, a, b, c.getAuthTag()]) : Buffer.concat([a, b, c.getAuthTag()]);
}

/** Decrypt `ct || tag`; a failed check throws Go's error text as a 400. */
export function aeadOpen(suite: AeadSuite, key: Buffer, nonce: Buffer, sealed: Buffer, aad?: Buffer): Buffer {
  const s = AEAD_SUITES[suite];
  if (sealed.length < TAG) throw invalid(s.authError);
  if (s.node === null) {
    try {
      return Buffer.from(xchacha20poly1305(key, nonce, aad && aad.length ? aad : undefined).decrypt(sealed));
    } catch {
      throw invalid(s.authError);
    }
  }
  const d = createDecipheriv(s.node as CipherGCMTypes, key, nonce, { authTagLength: TAG });
  d.setAuthTag(sealed.subarray(sealed.length - TAG));
  const body = sealed.subarray(0, sealed.length - TAG);
  if (aad && aad.length) d.setAAD(aad, { plaintextLength: body.length });
  try {
    const a = d.update(body);
    const b = d.final();
    return b.length ? Buffer.concat([a, b]) : a;
  } catch {
    throw invalid(s.authError);
  }
}
