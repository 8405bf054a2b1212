/**
 * Key derivation for `derived=true` keys (reference transit-wire.md section 4.3): HKDF-SHA256 with an
 * empty salt and the raw context as info (Vault `kdf` 1, ours 0), or the legacy NIST SP 800-108
 * counter KDF with HMAC-SHA256 (Vault `kdf` 0, ours 1). Shared by key management (derived Ed25519
 * public keys on read) and the data operations (encrypt/decrypt/sign with a context).
 */
import { createHmac, createPrivateKey, createPublicKey, hkdfSync, type KeyObject } from 'node:crypto';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { invalid } from '../../../framework/errors.js';
import type { TransitKey } from './types.js';

/** Vault's message when a derived key is used without context (reference 4.3). */
export const MISSING_CONTEXT =
  "missing 'context' for key derivation; the key was created using a derived key, which means additional, per-request information must be included in order to perform operations with the key";

/** HKDF-SHA256 (RFC 5869), empty salt, info = context; node:crypto up to its 1024-byte info limit, @noble beyond. */
export function hkdfSha256(ikm: Buffer, context: Buffer, length: number): Buffer {
  if (context.length <= 1024) return Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), context, length));
  return Buffer.from(hkdf(sha256, ikm, new Uint8Array(0), context, length));
}

/** Legacy counter-mode KDF: HMAC-SHA256(IKM, BE32(0) || context || BE32(256)), always 32 bytes. */
export function counterKdf(ikm: Buffer, context: Buffer): Buffer {
  const head = Buffer.alloc(4);
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(256);
  return createHmac('sha256', ikm).update(head).update(context).update(tail).digest();
}

/** Derive `length` bytes from a version's key with the key's KDF (`kdf` 0 = HKDF, 1 = counter). */
export function deriveBytes(kdf: 0 | 1, ikm: Buffer, context: Buffer, length: number): Buffer {
  if (context.length === 0) throw invalid('context', MISSING_CONTEXT);
  if (kdf === 1) {
    const out = counterKdf(ikm, context);
    if (length > out.length) throw invalid('context', `legacy KDF yields 32 bytes, ${length} requested`);
    return out.subarray(0, length);
  }
  return hkdfSha256(ikm, context, length);
}

/** The derived key for a key version, or the version's key itself when the key is not derived. */
export function versionKey(key: TransitKey, version: number, context: Buffer | undefined, length: number): Buffer {
  const v = key.versions.get(version);
  if (!v?.key) throw invalid('key_version', `version ${version} has no key material`);
  if (!key.derived) return v.key;
  return deriveBytes(key.kdf, v.key, context ?? Buffer.alloc(0), length);
}

const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** An Ed25519 private KeyObject from a 32-byte seed. */
export function ed25519FromSeed(seed: Buffer): KeyObject {
  return createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed.subarray(0, 32)]),
    format: 'der',
    type: 'pkcs8',
  });
}

/** The raw 32-byte public key of an Ed25519 KeyObject (private or public). */
export function ed25519PublicRaw(k: KeyObject): Buffer {
  const pub = k.type === 'private' ? createPublicKey(k) : k;
  return Buffer.from(pub.export({ format: 'der', type: 'spki' })).subarray(-32);
}

/** A derived Ed25519 key pair: seed = first 32 bytes of HKDF(64-byte seed||pub, context) (reference 4.3). */
export function deriveEd25519(
  kdf: 0 | 1,
  stored64: Buffer,
  context: Buffer,
): { privateKey: KeyObject; publicKey: KeyObject; publicRaw: Buffer } {
  const seed = deriveBytes(kdf, stored64, context, 32);
  const privateKey = ed25519FromSeed(seed);
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, publicRaw: ed25519PublicRaw(publicKey) };
}
