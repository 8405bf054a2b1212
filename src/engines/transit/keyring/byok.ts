/**
 * Bring your own key (reference transit-wire.md section 6): the import ciphertext is
 * RSA-OAEP(wrapping public key, ephemeral AES-256 key; hash H for OAEP and MGF1, empty label), exactly
 * as long as the RSA modulus (512 bytes for the RSA-4096 wrapping key), followed by
 * AES-KWP(ephemeral key, target key) (RFC 5649). Target encodings: raw bytes for symmetric and hmac
 * keys, PKCS#8 DER for asymmetric keys (plus the RSASSA-PSS and NSS Ed25519 variants Vault accepts).
 */
import {
  constants,
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';
import { invalid } from '../../../framework/errors.js';
import type { Storage } from '../../../storage/backend.js';
import { children, oidText, readTlv } from './der.js';
import { ed25519FromSeed } from './derive.js';
import { KEY_TYPES } from './key-types.js';
import { HMAC_KEY_SIZE, ed25519Stored, keyObjectMismatch, publicPem } from './material.js';
import type { KeyTypeName } from './types.js';

const generateKeyPairAsync = promisify(generateKeyPair);

/** `hash_function` names (case-insensitive) and their node:crypto digests. `SHA-256` style is refused, as in Vault. */
export const IMPORT_HASHES: Readonly<Record<string, string>> = {
  SHA1: 'sha1',
  SHA224: 'sha224',
  SHA256: 'sha256',
  SHA384: 'sha384',
  SHA512: 'sha512',
};

/** The node digest of a `hash_function` value, or 400 naming `field`. */
export function importHash(name: string | undefined, field = 'hash_function'): string {
  const h = IMPORT_HASHES[(name ?? 'SHA256').toUpperCase()];
  if (!h) throw invalid(field, `unknown hash function: ${name}`);
  return h;
}

/** RFC 5649 default alternative IV (node's id-aes256-wrap-pad takes it as the IV). */
const KWP_IV = Buffer.from('A65959A6', 'hex');

/** AES key wrap with padding (RFC 5649) under a 32-byte key. */
export function kwpWrap(kek: Buffer, data: Buffer): Buffer {
  const c = createCipheriv('id-aes256-wrap-pad', kek, KWP_IV);
  return Buffer.concat([c.update(data), c.final()]);
}

/** Unwrap RFC 5649; throws when the integrity check fails. */
export function kwpUnwrap(kek: Buffer, wrapped: Buffer): Buffer {
  const d = createDecipheriv('id-aes256-wrap-pad', kek, KWP_IV);
  return Buffer.concat([d.update(wrapped), d.final()]);
}

/** Build an import ciphertext for `material` under an RSA public key (BYOK export, CLI helper, tests). */
export function wrapForImport(rsaPublic: KeyObject, material: Buffer, hash = 'sha256'): Buffer {
  const eph = randomBytes(32);
  const wrappedKey = publicEncrypt({ key: rsaPublic, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash }, eph);
  return Buffer.concat([wrappedKey, kwpWrap(eph, material)]);
}

/** Recover the target key bytes of an import ciphertext with the wrapping private key. */
export function unwrapImport(wrappingPrivate: KeyObject, ciphertext: Buffer, hash: string): Buffer {
  const rsaLen = Math.ceil((wrappingPrivate.asymmetricKeyDetails?.modulusLength ?? 4096) / 8);
  if (ciphertext.length <= rsaLen) throw invalid('ciphertext', 'provided ciphertext is too short');
  let eph: Buffer;
  try {
    eph = privateDecrypt(
      { key: wrappingPrivate, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash },
      ciphertext.subarray(0, rsaLen),
    );
  } catch {
    throw invalid(
      'ciphertext',
      'failed to decrypt the ephemeral AES key with the wrapping key (wrong wrapping key or hash_function?)',
    );
  }
  if (eph.length !== 32) throw invalid('ciphertext', 'expected ephemeral AES key to be 256-bit');
  try {
    return kwpUnwrap(eph, ciphertext.subarray(rsaLen));
  } catch {
    throw invalid('ciphertext', 'failed to unwrap the key material (AES-KWP integrity check failed)');
  }
}

const OID_RSA_PSS = '1.2.840.113549.1.1.10';
const OID_NSS_ED25519 = ['1.3.6.1.4.1.11591.15.1', '1.3.101.110'];

/** Load PKCS#8 DER, accepting the RSASSA-PSS OID and NSS-style Ed25519 as Vault does. */
export function parsePkcs8(der: Buffer): KeyObject {
  let alg = '';
  let inner: Buffer | undefined;
  try {
    const top = children(readTlv(der).content);
    alg = oidText(children(top[1]!.content)[0]!.content);
    inner = top[2]?.content;
    const params = children(top[1]!.content)[1];
    if (params && params.tag === 0x06) alg += ' ' + oidText(params.content);
  } catch {
    throw invalid('ciphertext', 'error importing key: failed to parse PKCS#8 private key');
  }
  try {
    if (alg.startsWith(OID_RSA_PSS) && inner) return createPrivateKey({ key: inner, format: 'der', type: 'pkcs1' });
    if (inner && OID_NSS_ED25519.some((o) => alg.split(' ').includes(o))) {
      // NSS: an ECPrivateKey { version, privateKey OCTET STRING (the 32-byte seed), ... } inside.
      const ec = children(readTlv(inner).content);
      const seed = ec[1]!.content;
      if (seed.length !== 32) throw new Error('bad seed');
      return ed25519FromSeed(seed);
    }
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } catch {
    throw invalid('ciphertext', 'error importing key: failed to parse PKCS#8 private key');
  }
}

/** Key material recovered for one imported version. */
export interface ImportedMaterial {
  key?: Buffer;
  privateKey?: KeyObject;
  publicKey?: KeyObject;
  /** Bytes of an imported hmac key. */
  keySize?: number;
}

/** Check and load unwrapped target bytes for `type`; 400 naming the problem on a mismatch. */
export function parseImportedMaterial(type: KeyTypeName, bytes: Buffer): ImportedMaterial {
  const info = KEY_TYPES[type];
  if (info.kind === 'aead' || info.kind === 'cmac') {
    if (bytes.length !== info.keyBytes)
      throw invalid('ciphertext', `error importing key: invalid key size ${bytes.length} bytes for key type ${type}`);
    return { key: bytes };
  }
  if (info.kind === 'hmac') {
    if (bytes.length < HMAC_KEY_SIZE.min || bytes.length > HMAC_KEY_SIZE.max) {
      throw invalid(
        'ciphertext',
        `error importing key: invalid key size ${bytes.length} bytes for key type hmac (must be ${HMAC_KEY_SIZE.min}-${HMAC_KEY_SIZE.max})`,
      );
    }
    return { key: bytes, keySize: bytes.length };
  }
  if (info.kind !== 'asymmetric') throw invalid('type', `import is not supported for key type ${type}`);
  const priv = parsePkcs8(bytes);
  const bad = keyObjectMismatch(type, priv);
  if (bad) throw invalid('ciphertext', `error importing key: ${bad}`);
  const pub = createPublicKey(priv);
  return type === 'ed25519'
    ? { key: ed25519Stored(priv), privateKey: priv, publicKey: pub }
    : { privateKey: priv, publicKey: pub };
}

/** Load a PEM public key for a public-key-only import of `type`. */
export function parseImportedPublicKey(type: KeyTypeName, pem: string): KeyObject {
  if (!KEY_TYPES[type].publicImport) throw invalid('public_key', 'provided type does not support public_key import');
  let pub: KeyObject;
  try {
    pub = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw invalid('public_key', 'error parsing public key: not a PEM PUBLIC KEY (PKIX)');
  }
  const bad = keyObjectMismatch(type, pub);
  if (bad) throw invalid('public_key', `error importing key: ${bad}`);
  return pub;
}

/** The bytes byok-export wraps for a version: raw for symmetric/hmac, PKCS#8 DER for asymmetric. */
export function exportMaterial(type: KeyTypeName, v: { key?: Buffer; privateKey?: KeyObject }): Buffer | null {
  const info = KEY_TYPES[type];
  if (info.kind === 'aead' || info.kind === 'hmac' || info.kind === 'cmac') return v.key ?? null;
  if (info.kind === 'asymmetric' && v.privateKey)
    return Buffer.from(v.privateKey.export({ format: 'der', type: 'pkcs8' }));
  // ml-dsa: the seed; slh-dsa: the secret key; hybrid: the seed followed by the classical PKCS#8 (what import takes)
  if (info.kind === 'pqc' && v.key)
    return type === 'hybrid' && v.privateKey
      ? Buffer.concat([v.key, Buffer.from(v.privateKey.export({ format: 'der', type: 'pkcs8' }))])
      : v.key;
  return null;
}

/** The mount's RSA-4096 wrapping key: created on first use, stored behind the barrier, never rotated. */
export class WrappingKey {
  private pending: Promise<KeyObject> | null = null;

  constructor(
    private readonly storage: Storage,
    private readonly path = 'wrapping/key',
  ) {}

  /** The private key (created and persisted on first use; concurrent callers share one generation). */
  get(): Promise<KeyObject> {
    this.pending ??= this.loadOrCreate().catch((e: unknown) => {
      this.pending = null;
      throw e;
    });
    return this.pending;
  }

  /** PEM `PUBLIC KEY` (PKIX) with trailing newline. */
  async publicPem(): Promise<string> {
    return publicPem(createPublicKey(await this.get()));
  }

  private async loadOrCreate(): Promise<KeyObject> {
    const b = await this.storage.get(this.path);
    if (b) {
      const rec = JSON.parse(b.toString('utf8')) as { private_key: string };
      return createPrivateKey({ key: Buffer.from(rec.private_key, 'base64'), format: 'der', type: 'pkcs8' });
    }
    const { privateKey } = await generateKeyPairAsync('rsa', { modulusLength: 4096, publicExponent: 65537 });
    const der = privateKey.export({ format: 'der', type: 'pkcs8' });
    await this.storage.put(this.path, Buffer.from(JSON.stringify({ private_key: der.toString('base64') }), 'utf8'));
    return privateKey;
  }
}
