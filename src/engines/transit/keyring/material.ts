/**
 * Key material of one version: generation (async for RSA/EC/Ed25519 so the event loop never blocks),
 * the per-version storage record, and public-key encodings (reference transit-wire.md sections 2, 5.1).
 */
import { createPrivateKey, createPublicKey, generateKeyPair, randomBytes, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { internal, invalid } from '../../../framework/errors.js';
import { KEY_TYPES } from './key-types.js';
import type { HybridEcType, KeyTypeName, KeyVersion } from './types.js';
import { ed25519PublicRaw } from './derive.js';
import { generatePq } from '../pq/pq-material.js';

const generateKeyPairAsync = promisify(generateKeyPair);

/** Bytes of every version's independent HMAC key. */
export const HMAC_KEY_BYTES = 32;

/** Default and bounds of `key_size` for the hmac type (spec section 8). */
export const HMAC_KEY_SIZE = { default: 32, min: 32, max: 512 } as const;

/** A key version whose KeyObjects are parsed from DER on first use (fast loading of many versions). */
export class LoadedVersion implements KeyVersion {
  version: number;
  key?: Buffer;
  hmacKey: Buffer;
  creationTime: number;
  convergentVersion?: number;
  certificateChain?: string[];
  managedKeyId?: string;
  private privDer?: Buffer;
  private pubDer?: Buffer;
  private priv?: KeyObject;
  private pub?: KeyObject;
  private readonly ed25519: boolean;

  constructor(init: {
    version: number;
    key?: Buffer;
    hmacKey: Buffer;
    creationTime: number;
    convergentVersion?: number;
    certificateChain?: string[];
    privateKey?: KeyObject;
    publicKey?: KeyObject;
    privDer?: Buffer;
    pubDer?: Buffer;
    ed25519?: boolean;
    managedKeyId?: string;
  }) {
    this.version = init.version;
    this.key = init.key;
    this.hmacKey = init.hmacKey;
    this.creationTime = init.creationTime;
    if (init.convergentVersion) this.convergentVersion = init.convergentVersion;
    if (init.certificateChain?.length) this.certificateChain = init.certificateChain;
    if (init.managedKeyId) this.managedKeyId = init.managedKeyId;
    this.priv = init.privateKey;
    this.pub = init.publicKey;
    this.privDer = init.privDer;
    this.pubDer = init.pubDer;
    this.ed25519 = init.ed25519 ?? false;
  }

  /** Asymmetric private key (parsed lazily). */
  get privateKey(): KeyObject | undefined {
    if (!this.priv) {
      if (this.privDer) this.priv = createPrivateKey({ key: this.privDer, format: 'der', type: 'pkcs8' });
      else if (this.ed25519 && this.key?.length === 64) this.priv = ed25519PrivateFromStored(this.key);
    }
    return this.priv;
  }
  set privateKey(k: KeyObject | undefined) {
    this.priv = k;
    this.privDer = undefined;
  }

  /** Asymmetric public key (parsed lazily). */
  get publicKey(): KeyObject | undefined {
    if (!this.pub) {
      if (this.pubDer) this.pub = createPublicKey({ key: this.pubDer, format: 'der', type: 'spki' });
      else if (this.privateKey) this.pub = createPublicKey(this.privateKey);
    }
    return this.pub;
  }
  set publicKey(k: KeyObject | undefined) {
    this.pub = k;
    this.pubDer = undefined;
  }
}

/** The stored form of one version (`versions/<name>/<n>`, behind the barrier). */
export interface VersionRecord {
  version: number;
  /** Unix seconds, fractional. */
  time: number;
  key?: string;
  hmac_key: string;
  /** PKCS#8 DER (RSA, ECDSA; Ed25519 lives in `key` as seed||pub). */
  private_key?: string;
  /** SPKI DER (asymmetric). */
  public_key?: string;
  convergent_version?: number;
  /** PEM certificates, leaf first. */
  certificate_chain?: string[];
  /** managed_key type: UUID of the managed key (Vault's key entry field of the same name). */
  managed_key_id?: string;
}

const b64 = (b: Buffer): string => b.toString('base64');

/** Serialise a version for storage. */
export function toRecord(v: KeyVersion, type: KeyTypeName): VersionRecord {
  const rec: VersionRecord = { version: v.version, time: v.creationTime, hmac_key: b64(v.hmacKey) };
  if (v.key) rec.key = b64(v.key);
  const info = KEY_TYPES[type];
  if (info.kind === 'asymmetric' || (info.kind === 'pqc' && v.publicKey)) {
    if (type !== 'ed25519' && v.privateKey)
      rec.private_key = b64(Buffer.from(v.privateKey.export({ format: 'der', type: 'pkcs8' })));
    if (v.publicKey) rec.public_key = b64(Buffer.from(v.publicKey.export({ format: 'der', type: 'spki' })));
  }
  if (v.convergentVersion) rec.convergent_version = v.convergentVersion;
  if (v.certificateChain?.length) rec.certificate_chain = v.certificateChain;
  if (v.managedKeyId) rec.managed_key_id = v.managedKeyId;
  return rec;
}

/** Load a stored version (KeyObjects are parsed on first use). */
export function fromRecord(rec: VersionRecord, type: KeyTypeName): LoadedVersion {
  return new LoadedVersion({
    version: rec.version,
    creationTime: rec.time,
    key: rec.key !== undefined ? Buffer.from(rec.key, 'base64') : undefined,
    hmacKey: Buffer.from(rec.hmac_key, 'base64'),
    privDer: rec.private_key ? Buffer.from(rec.private_key, 'base64') : undefined,
    pubDer: rec.public_key ? Buffer.from(rec.public_key, 'base64') : undefined,
    convergentVersion: rec.convergent_version,
    certificateChain: rec.certificate_chain,
    ed25519: type === 'ed25519',
    managedKeyId: rec.managed_key_id,
  });
}

/** Ed25519 private KeyObject from the stored 64-byte seed||public value. */
export function ed25519PrivateFromStored(stored: Buffer): KeyObject {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), stored.subarray(0, 32)]);
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

/** The 64-byte Go-style Ed25519 private value (seed || public) of a private KeyObject. */
export function ed25519Stored(priv: KeyObject): Buffer {
  const jwk = priv.export({ format: 'jwk' });
  return Buffer.concat([Buffer.from(jwk.d!, 'base64url'), Buffer.from(jwk.x!, 'base64url')]);
}

/** Generate fresh material for a new version of `type` (async for asymmetric types). */
export async function generateVersion(
  type: KeyTypeName,
  version: number,
  opts: {
    keySize?: number;
    now: number;
    convergentVersion?: number;
    managedKeyId?: string;
    parameterSet?: string;
    hybridEc?: HybridEcType;
  },
): Promise<LoadedVersion> {
  const info = KEY_TYPES[type];
  const base = {
    version,
    creationTime: opts.now,
    convergentVersion: opts.convergentVersion,
    hmacKey: randomBytes(HMAC_KEY_BYTES),
  };
  switch (info.kind) {
    case 'aead':
      return new LoadedVersion({ ...base, key: randomBytes(info.keyBytes!) });
    case 'cmac':
      return new LoadedVersion({ ...base, key: randomBytes(info.keyBytes!) });
    case 'hmac': {
      const key = randomBytes(opts.keySize || HMAC_KEY_SIZE.default);
      return new LoadedVersion({ ...base, key, hmacKey: key });
    }
    case 'asymmetric': {
      if (type === 'ed25519') {
        const { privateKey, publicKey } = await generateKeyPairAsync('ed25519');
        return new LoadedVersion({ ...base, key: ed25519Stored(privateKey), privateKey, publicKey, ed25519: true });
      }
      const { privateKey, publicKey } = info.curve
        ? await generateKeyPairAsync('ec', { namedCurve: info.curve })
        : await generateKeyPairAsync('rsa', { modulusLength: info.rsaBits!, publicExponent: 65537 });
      return new LoadedVersion({ ...base, privateKey, publicKey });
    }
    case 'pqc': {
      const m = await generatePq({ type, parameterSet: opts.parameterSet, hybridEc: opts.hybridEc });
      return new LoadedVersion({ ...base, ...m });
    }
    case 'managed':
      // No material here: the version points at the managed key (its HMAC key stays unused: HMAC is refused).
      if (!opts.managedKeyId)
        throw invalid(
          'managed_key_name',
          'managed_key_name or managed_key_id is required for keys of type managed_key',
        );
      return new LoadedVersion({ ...base, managedKeyId: opts.managedKeyId });
  }
  throw internal(`unknown key kind for ${type}`);
}

/** PEM `PUBLIC KEY` (PKIX) with trailing newline. */
export function publicPem(k: KeyObject): string {
  const pem = String(k.export({ format: 'pem', type: 'spki' }));
  return pem.endsWith('\n') ? pem : pem + '\n';
}

/** The public key as Vault shows it on read: PEM for EC/RSA, base64 of 32 bytes for Ed25519. */
export function publicKeyText(type: KeyTypeName, v: KeyVersion): string {
  if (!v.publicKey) return '';
  if (type === 'ed25519') return ed25519PublicRaw(v.publicKey).toString('base64');
  return publicPem(v.publicKey);
}

/** Check that an asymmetric KeyObject fits `type` (curve, modulus size, algorithm); returns a message or null. */
export function keyObjectMismatch(type: KeyTypeName, k: KeyObject): string | null {
  const info = KEY_TYPES[type];
  const details = k.asymmetricKeyDetails ?? {};
  if (type === 'ed25519')
    return k.asymmetricKeyType === 'ed25519' ? null : `invalid key type: expected ed25519, got ${k.asymmetricKeyType}`;
  if (info.curve) {
    if (k.asymmetricKeyType !== 'ec') return `invalid key type: expected ${type}, got ${k.asymmetricKeyType}`;
    const curve =
      { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' }[String(details.namedCurve)] ??
      String(details.namedCurve);
    return curve === info.curve ? null : `invalid curve: expected ${info.curve}, got ${curve}`;
  }
  if (info.rsaBits) {
    if (k.asymmetricKeyType !== 'rsa' && k.asymmetricKeyType !== 'rsa-pss')
      return `invalid key type: expected ${type}, got ${k.asymmetricKeyType}`;
    const bits = details.modulusLength ?? 0;
    return bits === info.rsaBits
      ? null
      : `invalid key size: expected ${info.rsaBits / 8} bytes, got ${Math.ceil(bits / 8)} bytes`;
  }
  return `key type ${type} has no asymmetric key`;
}
