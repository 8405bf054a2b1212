/**
 * Data operations of transit keys of type `managed_key` (reference managed-keys-wire.md 2.4-2.6):
 * every version points at a managed key (its UUID); the work happens in the HSM or KMS through the
 * kms provider interface. Transit hashes the input before signing unless `prehashed` (Vault's
 * HashSignatureInput for managed keys); ECDSA signatures come back DER (`asn1`) or `r||s` (`jws`).
 * Ciphertexts keep Vault's shape `vault:vN:` + base64(provider output): AES-GCM `iv||ct||tag`,
 * RSA-OAEP the OAEP block.
 */
import { createHash } from 'node:crypto';
import { invalid } from '../../../framework/errors.js';
import type { KmsHash, KmsKey, KmsSignOptions } from '../../../framework/kms-key.js';
import type { TransitKey, TransitState } from '../keyring/types.js';
import { encodeDerSignature, parseDerSignature, splitJws, toFixed } from './ecdsa-der.js';
import { encryptionVersion, liveVersion } from './key-versions.js';
import type { SignatureOptions } from './signing.js';
import { decodeRawUrlBase64, decodeStdBase64, parseVersioned, versionPrefix } from './version-prefix.js';

const KMS_HASH: Record<string, KmsHash> = {
  sha1: 'sha1',
  'sha2-224': 'sha224',
  'sha2-256': 'sha256',
  'sha2-384': 'sha384',
  'sha2-512': 'sha512',
  'sha3-224': 'sha3-224',
  'sha3-256': 'sha3-256',
  'sha3-384': 'sha3-384',
  'sha3-512': 'sha3-512',
};

function access(state: TransitState) {
  if (!state.managed) throw invalid('managed keys are not available on this server');
  return state.managed;
}

async function keyOf(
  state: TransitState,
  key: TransitKey,
  version: number,
  usage: 'sign' | 'verify' | 'encrypt' | 'decrypt',
): Promise<KmsKey> {
  const v = liveVersion(key, version);
  if (!v.managedKeyId) throw invalid(`key version ${version} has no managed key`);
  return access(state).key(v.managedKeyId, usage);
}

/** Encrypt with the managed key of `keyVersion` (0 = latest). `nonce` (12 bytes) is the GCM IV when given. */
export async function managedEncrypt(
  state: TransitState,
  key: TransitKey,
  plaintext: Buffer,
  o: { keyVersion: number; nonce?: Buffer; associatedData?: Buffer },
): Promise<{ ciphertext: string; version: number }> {
  const ver = encryptionVersion(key, o.keyVersion);
  const k = await keyOf(state, key, ver, 'encrypt');
  if (!k.capabilities.encrypt) throw invalid(`managed key of version ${ver} (${k.kind}) does not support encryption`);
  if (k.kind === 'rsa' && o.associatedData?.length)
    throw invalid('associated_data provided for non-AEAD cipher suite managed_key (RSA-OAEP)');
  if (k.kind === 'rsa' && o.nonce?.length) throw invalid('nonce: not used by RSA-OAEP managed keys');
  const out = await k.encrypt(plaintext, {
    aad: o.associatedData?.length ? o.associatedData : undefined,
    iv: o.nonce?.length ? o.nonce : undefined,
  });
  return { ciphertext: versionPrefix(ver) + out.toString('base64'), version: ver };
}

/** Decrypt a `vault:vN:` ciphertext made by managedEncrypt. */
export async function managedDecrypt(
  state: TransitState,
  key: TransitKey,
  ciphertext: string,
  o: { associatedData?: Buffer },
): Promise<{ plaintext: Buffer; version: number }> {
  const { version, payload } = parseVersioned(ciphertext, 'ciphertext', key);
  const raw = decodeStdBase64(payload);
  if (!raw) throw invalid('invalid ciphertext: could not decode base64');
  const k = await keyOf(state, key, version, 'decrypt');
  if (!k.capabilities.decrypt)
    throw invalid(`managed key of version ${version} (${k.kind}) does not support decryption`);
  const plaintext = await k.decrypt(raw, { aad: o.associatedData?.length ? o.associatedData : undefined });
  return { plaintext, version };
}

function digestOf(input: Buffer, opts: SignatureOptions): Buffer {
  if (opts.prehashed || opts.hash.name === 'none') return input;
  return createHash(opts.hash.node!).update(input).digest();
}

function kmsOptions(k: KmsKey, opts: SignatureOptions, digest: Buffer): KmsSignOptions {
  const hash = opts.hash.name === 'none' ? ('none' as const) : KMS_HASH[opts.hash.name];
  if (!hash) throw invalid(`invalid hash algorithm ${JSON.stringify(opts.hash.name)}`);
  if (hash !== 'none' && digest.length !== opts.hash.size)
    throw invalid(`prehashed input must be ${opts.hash.size} bytes for ${opts.hash.name}, got ${digest.length}`);
  if (k.kind !== 'rsa') return { hash };
  if (opts.signatureAlgorithm !== 'pss' && opts.signatureAlgorithm !== 'pkcs1v15')
    throw invalid(`unsupported rsa signature algorithm ${opts.signatureAlgorithm}`);
  const padding: 'pss' | 'pkcs1v15' = opts.signatureAlgorithm;
  if (hash === 'none' && padding !== 'pkcs1v15')
    throw invalid('hash_algorithm=none requires signature_algorithm=pkcs1v15');
  let saltLength: number | undefined;
  if (padding === 'pss' && k.provider === 'pkcs11') {
    // Go semantics as native transit (reference transit-wire.md 4.7): 0 = auto (the largest salt when
    // signing), -1 = the hash length, n = n bytes.
    const bits = k.publicKey()?.asymmetricKeyDetails?.modulusLength ?? 2048;
    const max = Math.ceil((bits - 1) / 8) - 2 - digest.length;
    saltLength = opts.saltLength === 0 ? max : opts.saltLength === -1 ? digest.length : opts.saltLength;
    if (saltLength > max) throw invalid(`salt length is invalid: ${opts.saltLength}`);
  }
  return { hash, padding, saltLength };
}

/** Sign with the managed key of version `ver`; returns the `vault:vN:` signature. */
export async function managedSign(
  state: TransitState,
  key: TransitKey,
  ver: number,
  input: Buffer,
  opts: SignatureOptions,
): Promise<string> {
  const k = await keyOf(state, key, ver, 'sign');
  if (!k.capabilities.sign) throw invalid(`managed key of version ${ver} (${k.kind}) does not support signing`);
  if (k.kind === 'ec' && opts.hash.name === 'none')
    throw invalid('hash_algorithm=none is only valid for RSA PKCS#1 v1.5 signatures');
  const digest = digestOf(input, opts);
  const o = kmsOptions(k, opts, digest);
  // The original message lets AWS KMS hash it itself (MessageType RAW); PKCS#11 ignores it.
  let sig = await k.sign(digest, { ...o, message: opts.prehashed ? undefined : input });
  if (k.kind === 'ec' && opts.marshaling === 'jws') {
    const p = parseDerSignature(sig);
    if (typeof p === 'string') throw invalid('the managed key returned an invalid ECDSA signature');
    const size = ecSize(k);
    sig = toFixed(p.r, p.s, size)!;
    return versionPrefix(ver) + sig.toString('base64url');
  }
  return versionPrefix(ver) + sig.toString('base64');
}

function ecSize(k: KmsKey): number {
  const c = k.publicKey()?.asymmetricKeyDetails?.namedCurve;
  return c === 'prime256v1' ? 32 : c === 'secp384r1' ? 48 : 66;
}

/** Verify a `vault:vN:` signature against the managed key's public key. */
export async function managedVerify(
  state: TransitState,
  key: TransitKey,
  input: Buffer,
  signature: string,
  opts: SignatureOptions,
): Promise<boolean> {
  const { version, payload } = parseVersioned(signature, 'signature', key);
  const k = await keyOf(state, key, version, 'verify');
  if (!k.capabilities.verify)
    throw invalid(`managed key of version ${version} (${k.kind}) does not support verification`);
  let sig = k.kind === 'ec' && opts.marshaling === 'jws' ? decodeRawUrlBase64(payload) : decodeStdBase64(payload);
  if (!sig) throw invalid('invalid signature: could not decode base64');
  if (k.kind === 'ec' && opts.marshaling === 'jws') {
    const { r, s } = splitJws(sig);
    sig = encodeDerSignature(r, s);
  }
  const digest = digestOf(input, opts);
  const o = kmsOptions(k, opts, digest);
  return k.verify(digest, sig, o);
}
