/** Test fixtures: TransitKey values built directly from known material (no store involved). */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import type { KeyTypeName, KeyVersion, TransitKey } from '../../../src/engines/transit/keyring/types.js';
import { KEY_TYPES } from '../../../src/engines/transit/keyring/key-types.js';

/** Options for a fixture key. */
export interface FixtureOptions {
  derived?: boolean;
  kdf?: 0 | 1;
  convergent?: boolean;
  /** Policy-level convergent version (1, 2, or -1 with per-version 3). */
  convergentVersion?: number;
  /** Per-version convergent version. */
  perVersionConvergent?: number;
  minDecryptionVersion?: number;
  minEncryptionVersion?: number;
  disallowSha1?: boolean;
}

function base(name: string, type: KeyTypeName, versions: KeyVersion[], o: FixtureOptions): TransitKey {
  return {
    name,
    type,
    derived: o.derived ?? false,
    kdf: o.kdf ?? 0,
    convergentEncryption: o.convergent ?? false,
    convergentVersion: o.convergent ? (o.convergentVersion ?? -1) : 0,
    exportable: true,
    allowPlaintextBackup: false,
    deletionAllowed: false,
    minDecryptionVersion: o.minDecryptionVersion ?? 1,
    minEncryptionVersion: o.minEncryptionVersion ?? 0,
    minAvailableVersion: 0,
    latestVersion: versions.length,
    autoRotatePeriod: 0,
    importedKey: false,
    allowImportedKeyRotation: false,
    disallowSha1: o.disallowSha1,
    versions: new Map(versions.map((v) => [v.version, v])),
  };
}

/** A symmetric (AEAD or hmac) key with the given raw key per version (random when omitted). */
export function symmetricKey(type: KeyTypeName, keys: Buffer[] | number = 1, o: FixtureOptions = {}): TransitKey {
  const info = KEY_TYPES[type];
  const list = typeof keys === 'number' ? Array.from({ length: keys }, () => randomBytes(info.keyBytes ?? 32)) : keys;
  const versions = list.map((key, i) => ({
    version: i + 1,
    key,
    hmacKey: type === 'hmac' ? key : randomBytes(32),
    creationTime: 0,
    convergentVersion: o.convergent
      ? (o.perVersionConvergent ?? (o.convergentVersion === undefined || o.convergentVersion === -1 ? 3 : undefined))
      : undefined,
  }));
  return base('k', type, versions, o);
}

const ED_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** Ed25519 private key from a 32-byte seed, with its Go-style 64-byte stored value. */
export function ed25519FromSeed(seed: Buffer): { privateKey: KeyObject; publicKey: KeyObject; stored: Buffer } {
  const privateKey = createPrivateKey({ key: Buffer.concat([ED_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey);
  const raw = Buffer.from(publicKey.export({ format: 'der', type: 'spki' })).subarray(-32);
  return { privateKey, publicKey, stored: Buffer.concat([seed, raw]) };
}

const RSA_CACHE = new Map<number, KeyObject>();

/** An asymmetric key with `count` fresh versions (RSA keys are cached per size to keep tests fast). */
export function asymmetricKey(type: KeyTypeName, count = 1, o: FixtureOptions = {}): TransitKey {
  const info = KEY_TYPES[type];
  const versions: KeyVersion[] = [];
  for (let i = 1; i <= count; i++) {
    let privateKey: KeyObject;
    let key: Buffer | undefined;
    if (type === 'ed25519') {
      const e = ed25519FromSeed(randomBytes(32));
      privateKey = e.privateKey;
      key = e.stored;
    } else if (info.curve) {
      privateKey = generateKeyPairSync('ec', { namedCurve: info.curve }).privateKey;
    } else {
      const bits = info.rsaBits!;
      const cacheKey = bits * 10 + i;
      let k = RSA_CACHE.get(cacheKey);
      if (!k) {
        k = generateKeyPairSync('rsa', { modulusLength: bits }).privateKey;
        RSA_CACHE.set(cacheKey, k);
      }
      privateKey = k;
    }
    versions.push({
      version: i,
      key,
      hmacKey: randomBytes(32),
      privateKey,
      publicKey: createPublicKey(privateKey),
      creationTime: 0,
    });
  }
  return base('k', type, versions, o);
}

/** A copy of a key whose versions hold only public keys (public-key import). */
export function publicOnly(k: TransitKey): TransitKey {
  const versions = new Map<number, KeyVersion>();
  for (const [n, v] of k.versions)
    versions.set(n, { version: n, hmacKey: v.hmacKey, publicKey: v.publicKey, creationTime: 0 });
  return { ...k, versions };
}
