/**
 * RSA operations node:crypto does not offer directly: PKCS#1 v1.5 decryption with implicit
 * rejection (Node 20 refuses RSA_PKCS1_PADDING in privateDecrypt, CVE-2023-46809, and OpenSSL
 * 3.0 has no implicit rejection), EMSA-PSS over a prehashed digest, and PKCS#1 v1.5 verification
 * of a given digest. Built from raw RSA (RSA_NO_PADDING) per RFC 8017.
 */
import {
  constants,
  createHash,
  createHmac,
  privateDecrypt,
  privateEncrypt,
  publicDecrypt,
  randomBytes,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto';

/** Modulus length in bits of an RSA KeyObject. */
export function modulusBits(k: KeyObject): number {
  return k.asymmetricKeyDetails?.modulusLength ?? 0;
}

/** Outcome of RSAES-PKCS1-v1_5 decryption with implicit rejection. */
export interface Pkcs1Decryption {
  /** The real message when the padding is valid, else the synthetic one; never tells which by itself. */
  message: Buffer;
  /** Whether the padding was valid. Only a caller allowed to see plaintext may branch on it. */
  valid: boolean;
}

// Implicit rejection for RSAES-PKCS1-v1_5 (draft-irtf-cfrg-rsa-guidance, "Implicit rejection";
// the same algorithm OpenSSL 3.2+ uses by default, crypto/rsa/rsa_pk1.c): whatever the padding, the
// decryption computes a synthetic message from a key derived from the private exponent and the
// ciphertext, and selects between the real and the synthetic message with masks instead of
// branches. A caller who sees only what is done with the result (rewrap) cannot tell a valid
// padding from an invalid one. Checked against OpenSSL's known answers (test/vectors/README.md).

/** How many 16-bit length candidates the PRF yields (OpenSSL MAX_LEN_GEN_TRIES). */
const LENGTH_CANDIDATES = 128;

/** SHA-256 of d (big-endian, left-padded to the modulus length), per private key: the KDK's HMAC key. */
const exponentHashes = new WeakMap<KeyObject, Buffer>();

function exponentHash(priv: KeyObject, k: number): Buffer {
  let h = exponentHashes.get(priv);
  if (!h) {
    const d = Buffer.from(priv.export({ format: 'jwk' }).d as string, 'base64url');
    const padded = Buffer.alloc(k);
    d.copy(padded, k - d.length);
    h = createHash('sha256').update(padded).digest();
    padded.fill(0);
    d.fill(0);
    exponentHashes.set(priv, h);
  }
  return h;
}

/** The draft's PRF: HMAC-SHA256(kdk, I || label || bitLength) for I = 0, 1, ... (16-bit big-endian each). */
function implicitPrf(kdk: Buffer, label: string, bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  const tail = Buffer.alloc(2);
  tail.writeUInt16BE(bytes * 8);
  const labelBytes = Buffer.from(label, 'latin1');
  const counter = Buffer.alloc(2);
  for (let i = 0, off = 0; off < bytes; i++, off += 32) {
    counter.writeUInt16BE(i);
    createHmac('sha256', kdk).update(counter).update(labelBytes).update(tail).digest().copy(out, off);
  }
  return out;
}

// Branch-free helpers over small non-negative integers (< 2^31): 1 or 0, no data-dependent jumps.
const isZero = (x: number): number => ((x - 1) >>> 31) & 1;
const lessThan = (a: number, b: number): number => ((a - b) >>> 31) & 1;
const select = (bit: number, a: number, b: number): number => (a & -bit) | (b & ~-bit);

/**
 * RSAES-PKCS1-v1_5 decryption (RFC 8017 7.2.2) with implicit rejection: returns the message and
 * whether the padding was valid, having done the same work either way. Null only for what the
 * public key alone decides (a ciphertext longer than the modulus or not below it).
 */
export function rsaPkcs1DecryptImplicit(priv: KeyObject, ct: Buffer): Pkcs1Decryption | null {
  const k = Math.ceil(modulusBits(priv) / 8);
  if (ct.length > k || k < 11 || k * 8 > 0xffff) return null;
  // A shorter ciphertext is the same integer with leading zeros (OpenSSL reads it so; its vectors test it).
  const c = ct.length === k ? ct : Buffer.concat([Buffer.alloc(k - ct.length), ct]);
  let em: Buffer;
  try {
    em = privateDecrypt({ key: priv, padding: constants.RSA_NO_PADDING }, c);
  } catch {
    return null; // c >= n: public knowledge, nothing about the padding
  }
  if (em.length !== k) return null;

  // Synthetic message, always computed: KDK = HMAC-SHA256(SHA-256(d), C), then the PRF.
  const kdk = createHmac('sha256', exponentHash(priv, k)).update(c).digest();
  const synthetic = implicitPrf(kdk, 'message', k);
  const candidates = implicitPrf(kdk, 'length', LENGTH_CANDIDATES * 2);
  const maxLength = k - 2 - 8;
  let mask = maxLength;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  let syntheticLength = 0;
  for (let i = 0; i < candidates.length; i += 2) {
    const candidate = ((candidates[i]! << 8) | candidates[i + 1]!) & mask;
    syntheticLength = select(lessThan(candidate, maxLength), candidate, syntheticLength);
  }

  // EM = 0x00 || 0x02 || PS (>= 8 non-zero bytes) || 0x00 || M, scanned in full.
  let good = isZero(em[0]!) & isZero(em[1]! ^ 2);
  let found = 0;
  let zeroIndex = 0;
  for (let i = 2; i < k; i++) {
    const z = isZero(em[i]!);
    zeroIndex = select(~found & z & 1, i, zeroIndex);
    found |= z;
  }
  good &= 1 - lessThan(zeroIndex, 10);
  const start = select(good, zeroIndex + 1, k - syntheticLength);
  const out = Buffer.alloc(k - start);
  const byteMask = -good & 0xff;
  for (let i = start, j = 0; i < k; i++, j++) out[j] = (em[i]! & byteMask) | (synthetic[i]! & ~byteMask & 0xff);
  em.fill(0);
  synthetic.fill(0);
  kdk.fill(0);
  return { message: out, valid: good === 1 };
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
export function pssVerifyDigest(
  pub: KeyObject,
  hash: string,
  digest: Buffer,
  sig: Buffer,
  saltLen: number | null,
): boolean {
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
