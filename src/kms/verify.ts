/**
 * Software verification of signatures over a digest with a managed key's public key (the private
 * part stays in the HSM/KMS; verifying needs none of it). RSA PKCS#1 v1.5 compares the recovered
 * DigestInfo||digest; RSA-PSS follows RFC 8017 9.1.2 with the salt length detected; ECDSA over a
 * digest uses @noble/curves, since node:crypto always hashes its input.
 */
import { constants, createHash, publicDecrypt, timingSafeEqual, type KeyObject } from 'node:crypto';
import { p256, p384, p521 } from '@noble/curves/nist.js';
import { DIGEST_INFO } from './mechanisms.js';
import type { KmsSignOptions } from '../framework/kms-key.js';

function mgf1(hash: string, seed: Buffer, len: number): Buffer {
  const out: Buffer[] = [];
  for (let c = 0, n = 0; n < len; c++) {
    const ctr = Buffer.alloc(4);
    ctr.writeUInt32BE(c);
    const h = createHash(hash).update(seed).update(ctr).digest();
    out.push(h);
    n += h.length;
  }
  return Buffer.concat(out).subarray(0, len);
}

function pssVerify(pub: KeyObject, hash: string, digest: Buffer, sig: Buffer): boolean {
  const modBits = pub.asymmetricKeyDetails?.modulusLength ?? 0;
  if (sig.length !== Math.ceil(modBits / 8)) return false;
  const full = publicDecrypt({ key: pub, padding: constants.RSA_NO_PADDING }, sig);
  const emBits = modBits - 1;
  const emLen = Math.ceil(emBits / 8);
  const hLen = digest.length;
  for (let i = 0; i < full.length - emLen; i++) if (full[i] !== 0) return false;
  const em = full.subarray(full.length - emLen);
  if (emLen < hLen + 2 || em[emLen - 1] !== 0xbc) return false;
  const db = Buffer.from(em.subarray(0, emLen - hLen - 1));
  const h = em.subarray(emLen - hLen - 1, emLen - 1);
  const top = 8 * emLen - emBits;
  if (top && db[0]! >> (8 - top)) return false;
  const mask = mgf1(hash, h, db.length);
  for (let i = 0; i < db.length; i++) db[i]! ^= mask[i]!;
  db[0]! &= 0xff >> top;
  let one = 0;
  while (one < db.length && db[one] === 0) one++;
  if (db[one] !== 0x01) return false;
  const h2 = createHash(hash)
    .update(Buffer.alloc(8))
    .update(digest)
    .update(db.subarray(one + 1))
    .digest();
  return timingSafeEqual(h, h2);
}

const NOBLE = { 'P-256': p256, 'P-384': p384, 'P-521': p521 } as const;

/** Verify `signature` over `digest` (ECDSA signatures in DER). False, never a throw, for a bad signature. */
export function verifyDigest(pub: KeyObject, digest: Buffer, signature: Buffer, o: KmsSignOptions): boolean {
  try {
    if (pub.asymmetricKeyType === 'ec') {
      const jwk = pub.export({ format: 'jwk' });
      const c = NOBLE[jwk.crv as keyof typeof NOBLE];
      const point = Buffer.concat([
        Buffer.from([4]),
        Buffer.from(jwk.x!, 'base64url'),
        Buffer.from(jwk.y!, 'base64url'),
      ]);
      return c.verify(signature, digest, point, { prehash: false, lowS: false, format: 'der' });
    }
    if (o.padding === 'pss') return o.hash !== 'none' && pssVerify(pub, o.hash, digest, signature);
    const expected = o.hash === 'none' ? digest : Buffer.concat([DIGEST_INFO[o.hash], digest]);
    const got = publicDecrypt({ key: pub, padding: constants.RSA_PKCS1_PADDING }, signature);
    return got.length === expected.length && timingSafeEqual(got, expected);
  } catch {
    return false;
  }
}
