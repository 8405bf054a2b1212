/**
 * PKCS#11 facts as tables: mechanisms a managed key may name and what each allows, hash
 * constants, DigestInfo prefixes and curve OIDs (PKCS#11 v2.40 pkcs11t.h; RFC 8017 section 9.2
 * note 1; reference managed-keys-wire.md 4.1-4.3).
 */
import type { KmsHash } from '../framework/kms-key.js';

/** A mechanism a managed key may be configured with. */
export interface MechanismInfo {
  value: number;
  name: string;
  /** The key class it works with. */
  kind: 'rsa' | 'ec' | 'aes';
  sign: boolean;
  encrypt: boolean;
}

/** Mechanisms Vault documents for managed keys, plus AES-GCM for encryption (reference 1.3, 2.6). */
export const MECHANISMS: readonly MechanismInfo[] = [
  { value: 0x0001, name: 'CKM_RSA_PKCS', kind: 'rsa', sign: true, encrypt: false },
  { value: 0x000d, name: 'CKM_RSA_PKCS_PSS', kind: 'rsa', sign: true, encrypt: false },
  { value: 0x0009, name: 'CKM_RSA_PKCS_OAEP', kind: 'rsa', sign: true, encrypt: true },
  { value: 0x1041, name: 'CKM_ECDSA', kind: 'ec', sign: true, encrypt: false },
  { value: 0x1087, name: 'CKM_AES_GCM', kind: 'aes', sign: false, encrypt: true },
];

/** Mechanism by number, or by name with or without the `CKM_` prefix (`0x0001`, `1`, `RSA_PKCS`). */
export function mechanismOf(text: string | number): MechanismInfo | undefined {
  if (typeof text === 'number') return MECHANISMS.find((m) => m.value === text);
  const t = text.trim();
  if (/^0x[0-9a-f]+$/i.test(t) || /^\d+$/.test(t)) return MECHANISMS.find((m) => m.value === Number(t));
  const n = t.toUpperCase().replace(/^CKM_/, '');
  return MECHANISMS.find((m) => m.name === `CKM_${n}`);
}

/** Raw mechanisms used for the operations themselves (the caller hashes, reference 2.5). */
export const CKM = {
  RSA_PKCS: 0x0001,
  RSA_PKCS_OAEP: 0x0009,
  RSA_PKCS_PSS: 0x000d,
  ECDSA: 0x1041,
  AES_GCM: 0x1087,
} as const;

/** CKM_SHA* and CKG_MGF1_* per hash (SHA-3 values from PKCS#11 v3.0 pkcs11t.h). */
export const HASH_MECH: Record<KmsHash, { mech: number; mgf: number; bytes: number }> = {
  sha1: { mech: 0x0220, mgf: 1, bytes: 20 },
  sha224: { mech: 0x0255, mgf: 5, bytes: 28 },
  sha256: { mech: 0x0250, mgf: 2, bytes: 32 },
  sha384: { mech: 0x0260, mgf: 3, bytes: 48 },
  sha512: { mech: 0x0270, mgf: 4, bytes: 64 },
  'sha3-224': { mech: 0x02b5, mgf: 6, bytes: 28 },
  'sha3-256': { mech: 0x02b0, mgf: 7, bytes: 32 },
  'sha3-384': { mech: 0x02c0, mgf: 8, bytes: 48 },
  'sha3-512': { mech: 0x02d0, mgf: 9, bytes: 64 },
};

/** DER DigestInfo prefixes for CKM_RSA_PKCS signatures (RFC 8017 section 9.2, note 1). */
export const DIGEST_INFO: Record<KmsHash, Buffer> = {
  sha1: Buffer.from('3021300906052b0e03021a05000414', 'hex'),
  sha224: Buffer.from('302d300d06096086480165030402040500041c', 'hex'),
  sha256: Buffer.from('3031300d060960864801650304020105000420', 'hex'),
  sha384: Buffer.from('3041300d060960864801650304020205000430', 'hex'),
  sha512: Buffer.from('3051300d060960864801650304020305000440', 'hex'),
  'sha3-224': Buffer.from('302d300d06096086480165030402070500041c', 'hex'),
  'sha3-256': Buffer.from('3031300d060960864801650304020805000420', 'hex'),
  'sha3-384': Buffer.from('3041300d060960864801650304020905000430', 'hex'),
  'sha3-512': Buffer.from('3051300d060960864801650304020a05000440', 'hex'),
};

/** Curves: Vault's names, CKA_EC_PARAMS (DER OID), JWK name, field size in bytes. */
export const CURVES: ReadonlyArray<{
  name: 'P256' | 'P384' | 'P521';
  oid: Buffer;
  jwk: 'P-256' | 'P-384' | 'P-521';
  bytes: number;
}> = [
  { name: 'P256', oid: Buffer.from('06082a8648ce3d030107', 'hex'), jwk: 'P-256', bytes: 32 },
  { name: 'P384', oid: Buffer.from('06052b81040022', 'hex'), jwk: 'P-384', bytes: 48 },
  { name: 'P521', oid: Buffer.from('06052b81040023', 'hex'), jwk: 'P-521', bytes: 66 },
];

/** Raw `r || s` (CKM_ECDSA output, reference 4.3) to ASN.1 DER `SEQUENCE { INTEGER r, INTEGER s }`. */
export function rawToDer(raw: Buffer): Buffer {
  const half = raw.length / 2;
  const int = (b: Buffer) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    let v = b.subarray(i);
    if (v[0]! & 0x80) v = Buffer.concat([Buffer.from([0]), v]);
    return Buffer.concat([Buffer.from([0x02, v.length]), v]);
  };
  const body = Buffer.concat([int(raw.subarray(0, half)), int(raw.subarray(half))]);
  const len = body.length < 0x80 ? Buffer.from([body.length]) : Buffer.from([0x81, body.length]);
  return Buffer.concat([Buffer.from([0x30]), len, body]);
}
