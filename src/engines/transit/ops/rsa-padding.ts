/**
 * RSA operations node:crypto does not offer directly: PKCS#1 v1.5 decryption (Node 20 refuses
 * RSA_PKCS1_PADDING in privateDecrypt, CVE-2023-46809), EMSA-PSS over a prehashed digest, and
 * PKCS#1 v1.5 verification of a given digest. Built from raw RSA (RSA_NO_PADDING) per RFC 8017.
 */
import { constants, createHash, privateDecrypt, privateEncrypt, publicDecrypt, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

/** Modulus length in bits of an RSA KeyObject. */
export function modulusBits(k: KeyObject): number {
  return k.asymmetricKeyDetails?.modulusLength ?? 0;
}

/** RSAES-PKCS1-v1_5 decryption (RFC 8017 7.2.2); null when the padding is wrong. */
export function rsaPkcs1Decrypt(priv: KeyObject, ct: Buffer): Buffer | null {
  const k = Math.ceil(modulusBits(priv) / 8);
  if (ct.length !== k || k < 11) return null;
  let em: Buffer;
  try {
    em = privateDecrypt({ key: priv, padding: constants.RSA_NO_PADDING }, ct);
  } catch {
    return null;
  }
  // EM = 0x00 || 0x02 || PS (>= 8 non-zero bytes) || 0x00 || M. Scan every byte (no early exit on PS).
  let good = (em[0] === 0 ? 1 : 0) & (em[1] === 2 ? 1 : 0);
  let sep = 0;
  for (let i = 2; i < em.length; i++) {
    const isZero = em[i] === 0 ? 1 : 0;
    const first = isZero & (sep === 0 ? 1 : 0);
    sep = first ? i : sep;
  }
  good &= sep >= 10 ? 1 : 0;
  return good ? Buffer.from(em.subarray(sep + 1)) : null;
}

function mgf1(hash: string, seed: Buffer, len: number): Buffer {
  const out = Buffer.alloc(len);
  let off = 0;
  for (let c = 0; off < len; c++) {
    const cnt = Buffer.alloc(4);
    cnt.writeUInt32BE(c);
    const d = createHash(hash).update(seed).update(cnt).digest();
    d.copy(out, off, 0, Math.min(d.length, len - off));
    off += d.length;
  }
  return out;
}

/** Largest PSS salt for this key and hash (Go rsa: ceil((modBits-1)/8) - 2 - hLen). */
export function maxPssSalt(modBits: number, hLen: number): number {
  return Math.ceil((modBits - 1) / 8) - 2 - hLen;
}

/** RSASSA-PSS signature of a digest (EMSA-PSS-ENCODE, RFC 8017 9.1.1), MGF1 with the same hash. */
export function pssSignDigest(priv: KeyObject, hash: string, digest: Buffer, saltLen: number): Buffer {
  const modBits = modulusBits(priv);
  const k = Math.ceil(modBits / 8);
  const emBits = modBits - 1;
  const emLen = Math.ceil(emBits / 8);
  const hLen = digest.length;
  if (emLen < hLen + saltLen + 2) throw new Error('key too small for this salt length');
  const salt = randomBytes(saltLen);
  const h = createHash(hash).update(Buffer.alloc(8)).update(digest).update(salt).digest();
  const db = Buffer.alloc(emLen - hLen - 1);
  db[emLen - saltLen - hLen - 2] = 0x01;
  salt.copy(db, emLen - saltLen - hLen - 1);
  const mask = mgf1(hash, h, db.length);
  for (let i = 0; i < db.length; i++) db[i] ^= mask[i]!;
  db[0] &= 0xff >> (8 * emLen - emBits);
  const em = Buffer.concat([Buffer.alloc(k - emLen), db, h, Buffer.from([0xbc])]);
  return privateEncrypt({ key: priv, padding: constants.RSA_NO_PADDING }, em);
}

/** RSASSA-PSS verification of a digest (RFC 8017 9.1.2); `saltLen` null = detect. */
export function pssVerifyDigest(pub: KeyObject, hash: string, digest: Buffer, sig: Buffer, saltLen: number | null): boolean {
  const modBits = modulusBits(pub);
  const k = Math.ceil(modBits / 8);
  if (sig.length !== k) return false;
  let full: Buffer;
  try {
    full = publicDecrypt({ key: pub, padding: constants.RSA_NO_PADDING }, sig);
  } catch {
    return false;
  }
  const emBits = modBits - 1;
  const emLen = Math.ceil(emBits / 8);
  const hLen = digest.length;
  if (full.length < emLen) return false;
  for (let i = 0; i < full.length - emLen; i++) if (full[i] !== 0) return false;
  const em = full.subarray(full.length - emLen);
  if (emLen < hLen + 2 || em[emLen - 1] !== 0xbc) return false;
  const db = Buffer.from(em.subarray(0, emLen - hLen - 1));
  const h = em.subarray(emLen - hLen - 1, emLen - 1);
  const topBits = 8 * emLen - emBits;
  if (topBits && db[0] >> (8 - topBits)) return false;
  const mask = mgf1(hash, h, db.length);
  for (let i = 0; i < db.length; i++) db[i] ^= mask[i]!;
  db[0] &= 0xff >> topBits;
  let one = 0;
  while (one < db.length && db[one] === 0) one++;
  if (one >= db.length || db[one] !== 0x01) return false;
  const salt = db.subarray(one + 1);
  if (saltLen !== null && salt.length !== saltLen) return false;
  const h2 = createHash(hash).update(Buffer.alloc(8)).update(digest).update(salt).digest();
  return timingSafeEqual(h, h2);
}

/** PKCS#1 v1.5 signature (type 1 padding) over `data` as given: DigestInfo||digest, or raw for hash `none`. */
export function pkcs1SignRaw(priv: KeyObject, data: Buffer): Buffer {
  return privateEncrypt({ key: priv, padding: constants.RSA_PKCS1_PADDING }, data);
}

/** Check a PKCS#1 v1.5 signature whose payload must equal `expected` exactly. */
export function pkcs1VerifyRaw(pub: KeyObject, expected: Buffer, sig: Buffer): boolean {
  if (sig.length !== Math.ceil(modulusBits(pub) / 8)) return false;
  let got: Buffer;
  try {
    got = publicDecrypt({ key: pub, padding: constants.RSA_PKCS1_PADDING }, sig);
  } catch {
    return false;
  }
  return got.length === expected.length && timingSafeEqual(got, expected);
}
