/**
 * Vault's backup blob (reference transit-wire.md section 5.2): base64 of Go's JSON encoding of
 * `{"policy": Policy, "archived_keys": {"keys": [KeyEntry...]}}`, with Go's field order, `[]byte` as
 * base64 (or null), `*big.Int` as bare JSON numbers (kept exact with lossless-json), times as RFC 3339
 * and durations in nanoseconds. A backup taken from Vault restores here and ours restores in Vault.
 * keyhold extensions ride in fields Vault ignores (`keyhold_type` for xchacha20-poly1305, `disallow_sha1`).
 */
import { createPrivateKey, createPublicKey, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto';
import { parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import { invalid } from '../../../framework/errors.js';
import { pemBlocks, toPem } from './der.js';
import { GO_ZERO_TIME, formatGoTime, parseGoTime } from './go-time.js';
import { KEY_TYPES } from './key-types.js';
import { HMAC_KEY_BYTES, HMAC_KEY_SIZE, LoadedVersion, ed25519PrivateFromStored, publicPem } from './material.js';
import type { KeyTypeName, KeyVersion, TransitKey } from './types.js';
import { ed25519PublicRaw } from './derive.js';
import { parsePqConfig, type PqConfig } from '../pq/pq-params.js';
import { pqFromImport, pqPublicKey } from '../pq/pq-material.js';

/** Highest version count a restored backup may claim (guards absurd input). */
const MAX_VERSIONS = 1_000_000;

const NS_PER_SECOND = 1_000_000_000n;

/** Curve byte lengths for JWK coordinates. */
const CURVE_BYTES: Record<string, number> = { 'P-256': 32, 'P-384': 48, 'P-521': 66 };

function bytesToBig(b: Buffer): bigint {
  return b.length ? BigInt('0x' + b.toString('hex')) : 0n;
}

function bigToBytes(n: bigint, len?: number): Buffer {
  let hex = n.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  const b = Buffer.from(hex, 'hex');
  return len && b.length < len ? Buffer.concat([Buffer.alloc(len - b.length), b]) : b;
}

const b64u = (s: string | undefined): bigint => bytesToBig(Buffer.from(s ?? '', 'base64url'));
const u64 = (n: bigint, len?: number): string => bigToBytes(n, len).toString('base64url');

function modInverse(a: bigint, m: bigint): bigint {
  let [oldR, r] = [((a % m) + m) % m, m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return ((oldS % m) + m) % m;
}

/** Go `rsa.PrivateKey` JSON from a node key. */
function rsaKeyJson(k: KeyObject): Record<string, unknown> {
  const j = k.export({ format: 'jwk' });
  return {
    PublicKey: { N: b64u(j.n), E: b64u(j.e) },
    D: b64u(j.d),
    Primes: [b64u(j.p), b64u(j.q)],
    Precomputed: { Dp: b64u(j.dp), Dq: b64u(j.dq), Qinv: b64u(j.qi), CRTValues: [] },
  };
}

function big(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw invalid('backup', `${what} must be an integer`);
}

/** A node private key from Go `rsa.PrivateKey` JSON (CRT values recomputed, not trusted). */
function rsaFromJson(o: Record<string, unknown>): KeyObject {
  const pub = (o.PublicKey ?? {}) as Record<string, unknown>;
  const primes = o.Primes as unknown[];
  if (!Array.isArray(primes) || primes.length !== 2)
    throw invalid('backup', 'rsa_key: exactly two primes are supported');
  const n = big(pub.N, 'rsa_key.N');
  const e = big(pub.E, 'rsa_key.E');
  const d = big(o.D, 'rsa_key.D');
  const p = big(primes[0], 'rsa_key.Primes[0]');
  const q = big(primes[1], 'rsa_key.Primes[1]');
  if (p * q !== n) throw invalid('backup', 'rsa_key: primes do not match the modulus');
  const jwk: JsonWebKey = {
    kty: 'RSA',
    n: u64(n),
    e: u64(e),
    d: u64(d),
    p: u64(p),
    q: u64(q),
    dp: u64(d % (p - 1n)),
    dq: u64(d % (q - 1n)),
    qi: u64(modInverse(q, p)),
  };
  return createPrivateKey({ key: jwk, format: 'jwk' });
}

function rsaPublicFromJson(o: Record<string, unknown>): KeyObject {
  return createPublicKey({
    key: { kty: 'RSA', n: u64(big(o.N, 'rsa_public_key.N')), e: u64(big(o.E, 'rsa_public_key.E')) },
    format: 'jwk',
  });
}

function ecJwk(curve: string, x: bigint, y: bigint, d?: bigint): JsonWebKey {
  const len = CURVE_BYTES[curve]!;
  return { kty: 'EC', crv: curve, x: u64(x, len), y: u64(y, len), ...(d !== undefined ? { d: u64(d, len) } : {}) };
}

/** One KeyEntry in Go field order (current Vault: EC/RSA fields omitted when empty). */
function entryJson(key: TransitKey, v: KeyVersion): Record<string, unknown> {
  const info = KEY_TYPES[key.type];
  const e: Record<string, unknown> = {
    key: v.key ? v.key.toString('base64') : null,
    hmac_key: v.hmacKey.toString('base64'),
    time: formatGoTime(v.creationTime),
  };
  let publicKey = '';
  if (info.curve && v.publicKey) {
    const j = v.publicKey.export({ format: 'jwk' });
    e.ec_x = b64u(j.x);
    e.ec_y = b64u(j.y);
    if (v.privateKey) e.ec_d = b64u(v.privateKey.export({ format: 'jwk' }).d);
    publicKey = publicPem(v.publicKey);
  } else if (info.rsaBits && v.publicKey) {
    if (v.privateKey) e.rsa_key = rsaKeyJson(v.privateKey);
    const j = v.publicKey.export({ format: 'jwk' });
    e.rsa_public_key = { N: b64u(j.n), E: b64u(j.e) };
  } else if (key.type === 'ed25519' && v.publicKey) {
    publicKey = ed25519PublicRaw(v.publicKey).toString('base64');
  } else if (info.kind === 'pqc') {
    publicKey = pqPublicKey(key, v).toString('base64');
    // hybrid: the classical half as an EC key's fields, or (Ed25519) keyhold's field with its 32-byte seed
    if (v.publicKey?.asymmetricKeyType === 'ec') {
      const j = v.publicKey.export({ format: 'jwk' });
      e.ec_x = b64u(j.x);
      e.ec_y = b64u(j.y);
      if (v.privateKey) e.ec_d = b64u(v.privateKey.export({ format: 'jwk' }).d);
    } else if (v.privateKey?.asymmetricKeyType === 'ed25519') {
      e.keyhold_ed25519_seed = Buffer.from(v.privateKey.export({ format: 'jwk' }).d!, 'base64url').toString('base64');
    }
  }
  e.public_key = publicKey;
  if (v.convergentVersion) e.convergent_version = v.convergentVersion;
  e.creation_time = Math.floor(v.creationTime);
  if (v.certificateChain?.length)
    e.certificate_chain = v.certificateChain.map((p) => pemBlocks(p)[0]!.der.toString('base64'));
  return e;
}

const EMPTY_ENTRY = { key: null, hmac_key: null, time: GO_ZERO_TIME, public_key: '', creation_time: 0 };

/** Serialise a key as a Vault backup blob (base64 of JSON ending in a newline, as Go's encoder writes). */
export function encodeBackup(key: TransitKey): string {
  const keys: Record<string, unknown> = {};
  const archive: unknown[] = [];
  const floor = key.minAvailableVersion;
  for (let n = floor; n <= key.latestVersion; n++) {
    const v = key.versions.get(n);
    const entry = v ? entryJson(key, v) : EMPTY_ENTRY;
    archive.push(entry);
    if (v && n >= key.minDecryptionVersion) keys[String(n)] = entry;
  }
  const vaultType = KEY_TYPES[key.type].vaultId;
  const policy: Record<string, unknown> = {
    name: key.name,
    ...(key.keySize ? { key_size: key.keySize } : {}),
    keys,
    derived: key.derived,
    kdf: key.derived ? (key.kdf === 0 ? 1 : 0) : 0,
    convergent_encryption: key.convergentEncryption,
    exportable: key.exportable,
    min_decryption_version: key.minDecryptionVersion,
    min_encryption_version: key.minEncryptionVersion,
    latest_version: key.latestVersion,
    archive_version: key.latestVersion,
    archive_min_version: floor,
    min_available_version: key.minAvailableVersion,
    deletion_allowed: key.deletionAllowed,
    convergent_version: key.convergentEncryption ? (key.convergentVersion === 3 ? -1 : key.convergentVersion) : 0,
    type: vaultType,
    backup_info: key.backupInfo ?? null,
    restore_info: key.restoreInfo ?? null,
    allow_plaintext_backup: key.allowPlaintextBackup,
    version_template: '',
    storage_prefix: '',
    auto_rotate_period: BigInt(key.autoRotatePeriod) * NS_PER_SECOND,
    Imported: key.importedKey,
    AllowImportedKeyRotation: key.allowImportedKeyRotation,
    ParameterSet: key.parameterSet ?? '',
    HybridConfig: {
      PQCKeyType: key.type === 'hybrid' ? KEY_TYPES['ml-dsa'].vaultId : 0,
      ECKeyType: key.hybridEc ? KEY_TYPES[key.hybridEc].vaultId : 0,
    },
  };
  if (KEY_TYPES[key.type].vaultId >= 100) policy.keyhold_type = key.type;
  if (key.disallowSha1) policy.disallow_sha1 = true;
  if (key.publicJwks) policy.public_jwks = true;
  if (key.softDeleted) policy.soft_deleted = true;
  const text = stringifyLossless({ policy, archived_keys: { keys: archive } })! + '\n';
  return Buffer.from(text, 'utf8').toString('base64');
}

/** Integers stay numbers when safe, else bigint (RSA/EC values). */
function parseNumber(s: string): number | bigint {
  if (/^-?\d+$/.test(s)) {
    const n = Number(s);
    return Number.isSafeInteger(n) ? n : BigInt(s);
  }
  return Number(s);
}

type Json = Record<string, unknown>;

const num = (v: unknown, dflt = 0): number => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : dflt);
const bool = (v: unknown): boolean => v === true;
const bytes = (v: unknown, field: string): Buffer | undefined => {
  if (v === null || v === undefined || v === '') return undefined;
  if (typeof v !== 'string') throw invalid('backup', `${field} must be base64`);
  return Buffer.from(v, 'base64');
};

function typeFromVault(policy: Json): KeyTypeName {
  if (typeof policy.keyhold_type === 'string') {
    const t = KEY_TYPES[policy.keyhold_type as KeyTypeName];
    if (t) return t.name;
  }
  const id = num(policy.type, -1);
  // OpenBao numbers hmac 10 and xchacha20-poly1305 11 (Vault: 10 managed_key, 11 hmac). Vault hmac
  // keys always carry key_size; OpenBao's xchacha keys never do, and Vault managed keys hold no key_size.
  const keySize = num(policy.key_size);
  if (id === 10 && keySize > 0) return 'hmac';
  if (id === 11 && keySize === 0) return 'xchacha20-poly1305';
  const hit = Object.values(KEY_TYPES).find((t) => t.vaultId === id);
  if (!hit || hit.kind === 'managed') throw invalid('backup', `key type ${String(policy.type)} is not supported`);
  return hit.name;
}

/** Rebuild one version from a KeyEntry; 400 naming the version when material is malformed. */
function versionFromEntry(type: KeyTypeName, n: number, e: Json, pq?: PqConfig & { type: KeyTypeName }): LoadedVersion {
  const info = KEY_TYPES[type];
  const where = `version ${n}`;
  const t = typeof e.time === 'string' ? parseGoTime(e.time) : null;
  const creationTime = t && t > 0 ? t : num(e.creation_time);
  const key = bytes(e.key, `${where} key`);
  let hmacKey = bytes(e.hmac_key, `${where} hmac_key`) ?? randomBytes(HMAC_KEY_BYTES);
  const chain = Array.isArray(e.certificate_chain)
    ? (e.certificate_chain as string[]).map((d) => toPem('CERTIFICATE', Buffer.from(String(d), 'base64')))
    : undefined;
  const base = {
    version: n,
    creationTime,
    convergentVersion: num(e.convergent_version) || undefined,
    certificateChain: chain,
  };
  try {
    if (info.kind === 'aead' || info.kind === 'cmac') {
      if (!key || key.length !== info.keyBytes) throw new Error(`key must be ${info.keyBytes} bytes`);
      return new LoadedVersion({ ...base, key, hmacKey });
    }
    if (info.kind === 'hmac') {
      if (!key || key.length < HMAC_KEY_SIZE.min || key.length > HMAC_KEY_SIZE.max)
        throw new Error('hmac key must be 32-512 bytes');
      hmacKey = key;
      return new LoadedVersion({ ...base, key, hmacKey });
    }
    if (type === 'ed25519') {
      if (key) {
        if (key.length !== 64) throw new Error('ed25519 key must be 64 bytes');
        const priv = ed25519PrivateFromStored(key);
        return new LoadedVersion({
          ...base,
          key,
          hmacKey,
          privateKey: priv,
          publicKey: createPublicKey(priv),
          ed25519: true,
        });
      }
      const raw = bytes(e.public_key, `${where} public_key`);
      if (!raw || raw.length !== 32) throw new Error('ed25519 public_key must be 32 bytes');
      return new LoadedVersion({
        ...base,
        hmacKey,
        publicKey: createPublicKey({
          key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
          format: 'jwk',
        }),
        ed25519: true,
      });
    }
    if (info.curve) {
      if (e.ec_x !== null && e.ec_x !== undefined) {
        const x = big(e.ec_x, 'ec_x');
        const y = big(e.ec_y, 'ec_y');
        if (e.ec_d !== null && e.ec_d !== undefined) {
          const priv = createPrivateKey({ key: ecJwk(info.curve, x, y, big(e.ec_d, 'ec_d')), format: 'jwk' });
          return new LoadedVersion({ ...base, hmacKey, privateKey: priv, publicKey: createPublicKey(priv) });
        }
        return new LoadedVersion({
          ...base,
          hmacKey,
          publicKey: createPublicKey({ key: ecJwk(info.curve, x, y), format: 'jwk' }),
        });
      }
      if (typeof e.public_key === 'string' && e.public_key)
        return new LoadedVersion({ ...base, hmacKey, publicKey: createPublicKey(e.public_key) });
      throw new Error('EC key has no ec_x/ec_y');
    }
    if (info.kind === 'pqc') return pqVersionFromEntry(pq!, base, hmacKey, key, e);
    if (info.rsaBits) {
      if (e.rsa_key && typeof e.rsa_key === 'object') {
        const priv = rsaFromJson(e.rsa_key as Json);
        return new LoadedVersion({ ...base, hmacKey, privateKey: priv, publicKey: createPublicKey(priv) });
      }
      if (e.rsa_public_key && typeof e.rsa_public_key === 'object') {
        return new LoadedVersion({ ...base, hmacKey, publicKey: rsaPublicFromJson(e.rsa_public_key as Json) });
      }
      throw new Error('RSA key has no rsa_key or rsa_public_key');
    }
  } catch (err) {
    if ((err as { kind?: string }).kind) throw err;
    throw invalid('backup', `${where}: ${(err as Error).message.split('\n')[0]}`);
  }
  throw invalid('backup', `${where}: unsupported key type ${type}`);
}

/** Parse a backup blob into a key named `name` (or the backup's own name). 400 naming `backup` on bad input. */
export function decodeBackup(blob: string, name?: string): TransitKey {
  let doc: Json;
  try {
    const text = Buffer.from(blob.replace(/\s+/g, ''), 'base64').toString('utf8');
    doc = parseLossless(text, null, parseNumber) as Json;
  } catch (e) {
    throw invalid('backup', `not a valid backup (base64 of JSON): ${(e as Error).message.slice(0, 120)}`);
  }
  const policy = doc?.policy as Json | undefined;
  if (!policy || typeof policy !== 'object') throw invalid('backup', 'not a valid backup: missing "policy"');
  const type = typeFromVault(policy);
  const liveKeys = (policy.keys && typeof policy.keys === 'object' ? policy.keys : {}) as Record<string, Json>;
  // Pre-0.3 policies kept one key in `key` (Vault migrates it to version 1).
  if (Object.keys(liveKeys).length === 0 && typeof policy.key === 'string' && policy.key) {
    liveKeys['1'] = { key: policy.key, hmac_key: null, time: GO_ZERO_TIME, creation_time: 0 };
  }
  let latest = num(policy.latest_version);
  if (latest === 0) latest = Object.keys(liveKeys).length;
  if (latest < 1 || latest > MAX_VERSIONS) throw invalid('backup', `latest_version ${latest} is out of range`);
  const minAvailable = Math.max(0, num(policy.min_available_version));
  let minDecryption = num(policy.min_decryption_version);
  if (minDecryption < 1) minDecryption = 1;
  const minEncryption = Math.max(0, num(policy.min_encryption_version));
  if (minDecryption > latest || minEncryption > latest || minAvailable > latest)
    throw invalid('backup', 'minimum versions exceed latest_version');

  const entries = new Map<number, Json>();
  const archive = ((doc.archived_keys as Json | undefined)?.keys ?? []) as Json[];
  const archiveMin = num(policy.archive_min_version);
  if (Array.isArray(archive)) archive.forEach((e, i) => entries.set(i + archiveMin, e));
  for (const [k, e] of Object.entries(liveKeys)) entries.set(Number(k), e);

  const pqConfig = pqFromPolicy(type, policy);
  const versions = new Map<number, KeyVersion>();
  for (let n = Math.max(1, minAvailable); n <= latest; n++) {
    const e = entries.get(n);
    if (
      !e ||
      (e.key == null &&
        e.hmac_key == null &&
        e.ec_x == null &&
        e.rsa_key == null &&
        e.rsa_public_key == null &&
        !e.public_key)
    ) {
      throw invalid('backup', `backup has no key material for version ${n}`);
    }
    versions.set(n, versionFromEntry(type, n, e, pqConfig));
  }
  const convergent = bool(policy.convergent_encryption);
  const cv = num(policy.convergent_version);
  const derived = bool(policy.derived);
  const periodNs = policy.auto_rotate_period;
  const autoRotatePeriod = Number(
    (typeof periodNs === 'bigint' ? periodNs : BigInt(Math.floor(num(periodNs)))) / NS_PER_SECOND,
  );
  const info = (v: unknown) =>
    v && typeof v === 'object' && typeof (v as Json).time === 'string'
      ? { time: String((v as Json).time), version: num((v as Json).version) }
      : undefined;
  const key: TransitKey = {
    name: name ?? String(policy.name ?? ''),
    type,
    derived,
    kdf: derived && num(policy.kdf) === 0 ? 1 : 0,
    convergentEncryption: convergent,
    convergentVersion: convergent ? (cv === -1 ? 3 : cv === 0 ? 1 : cv) : 0,
    exportable: bool(policy.exportable),
    allowPlaintextBackup: bool(policy.allow_plaintext_backup),
    deletionAllowed: bool(policy.deletion_allowed),
    minDecryptionVersion: minDecryption,
    minEncryptionVersion: minEncryption,
    minAvailableVersion: minAvailable,
    latestVersion: latest,
    autoRotatePeriod,
    importedKey: bool(policy.Imported),
    allowImportedKeyRotation: bool(policy.AllowImportedKeyRotation),
    versions,
  };
  if (KEY_TYPES[type].kind === 'hmac')
    key.keySize = num(policy.key_size) || versions.get(latest)?.key?.length || HMAC_KEY_SIZE.default;
  if (policy.disallow_sha1 === true) key.disallowSha1 = true;
  if (policy.public_jwks === true) key.publicJwks = true;
  if (policy.soft_deleted === true) key.softDeleted = true;
  if (pqConfig) {
    key.parameterSet = pqConfig.parameterSet;
    if (pqConfig.hybridEc) key.hybridEc = pqConfig.hybridEc;
  }
  const backupInfo = info(policy.backup_info);
  if (backupInfo) key.backupInfo = backupInfo;
  const restoreInfo = info(policy.restore_info);
  if (restoreInfo) key.restoreInfo = restoreInfo;
  return key;
}

/** The post-quantum configuration of a backed-up policy (Vault's ParameterSet and HybridConfig). */
function pqFromPolicy(type: KeyTypeName, policy: Json): (PqConfig & { type: KeyTypeName }) | undefined {
  if (KEY_TYPES[type].kind !== 'pqc') return undefined;
  const hc = (policy.HybridConfig ?? {}) as Json;
  const ecId = num(hc.ECKeyType);
  const ec =
    type === 'hybrid'
      ? Object.values(KEY_TYPES).find((t) => t.vaultId === ecId && t.sign && t.kind === 'asymmetric' && !t.rsaBits)
          ?.name
      : undefined;
  const cfg = parsePqConfig(type, {
    parameterSet: String(policy.ParameterSet ?? policy.parameter_set ?? ''),
    pqc: type === 'hybrid' ? 'ml-dsa' : undefined,
    ec,
  });
  return { ...cfg!, type };
}

/** One post-quantum version: `key` (seed or SLH-DSA secret key) and, for hybrid, the classical half. */
function pqVersionFromEntry(
  pq: PqConfig & { type: KeyTypeName },
  base: { version: number; creationTime: number },
  hmacKey: Buffer,
  key: Buffer | undefined,
  e: Json,
): LoadedVersion {
  if (!key) throw new Error('post-quantum key has no key material');
  if (pq.type !== 'hybrid') return new LoadedVersion({ ...base, ...pqFromImport(pq, key), hmacKey });
  let priv: KeyObject;
  if (pq.hybridEc === 'ed25519') {
    const seed = bytes(e.keyhold_ed25519_seed, 'keyhold_ed25519_seed');
    if (!seed || seed.length !== 32) throw new Error('hybrid Ed25519 half needs keyhold_ed25519_seed (32 bytes)');
    priv = ed25519PrivateFromStored(Buffer.concat([seed, Buffer.alloc(32)]));
  } else {
    const curve = KEY_TYPES[pq.hybridEc!].curve!;
    priv = createPrivateKey({
      key: ecJwk(curve, big(e.ec_x, 'ec_x'), big(e.ec_y, 'ec_y'), big(e.ec_d, 'ec_d')),
      format: 'jwk',
    });
  }
  const der = Buffer.from(priv.export({ format: 'der', type: 'pkcs8' }));
  return new LoadedVersion({ ...base, ...pqFromImport(pq, Buffer.concat([key, der])), hmacKey });
}
