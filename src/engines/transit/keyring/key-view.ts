/**
 * The read-key data object (reference transit-wire.md section 3.1.2), returned by `GET keys/:name` and
 * by every write that answers with the key. Field presence follows Vault exactly.
 */
import { hybridPublicText, pqPublicKey, pqVersionName } from '../pq/pq-material.js';
import { KEY_TYPES } from './key-types.js';
import { deriveEd25519 } from './derive.js';
import { formatGoTime } from './go-time.js';
import { publicKeyText } from './material.js';
import type { KeyVersion, TransitKey } from './types.js';

/** Vault's `name` of an asymmetric version's entry (`P-256`, `ed25519`, `rsa-2048`). */
function asymName(key: TransitKey): string {
  return KEY_TYPES[key.type].curve ?? key.type;
}

/** The PEM chain of a version, blocks trimmed and joined by "\n". */
export function chainText(v: KeyVersion): string {
  return (v.certificateChain ?? []).map((p) => p.trim()).join('\n');
}

/** Public key shown for a version; derived Ed25519 shows the context-derived key, or "" without context. */
function shownPublicKey(key: TransitKey, v: KeyVersion, context?: Buffer): string {
  if (key.type === 'ed25519' && key.derived) {
    if (!context?.length || !v.key) return '';
    return deriveEd25519(key.kdf, v.key, context).publicRaw.toString('base64');
  }
  return publicKeyText(key.type, v);
}

/** Build the read-key data of `key` (`context` derives Ed25519 public keys). */
export function keyView(key: TransitKey, context?: Buffer): Record<string, unknown> {
  const info = KEY_TYPES[key.type];
  const d: Record<string, unknown> = {
    name: key.name,
    type: key.type,
    derived: key.derived,
    deletion_allowed: key.deletionAllowed,
    exportable: key.exportable,
    allow_plaintext_backup: key.allowPlaintextBackup,
    min_available_version: key.minAvailableVersion,
    min_decryption_version: key.minDecryptionVersion,
    min_encryption_version: key.minEncryptionVersion,
    latest_version: key.latestVersion,
    supports_encryption: info.encrypt,
    supports_decryption: info.decrypt,
    supports_signing: info.sign,
    supports_derivation: info.derive,
    auto_rotate_period: key.autoRotatePeriod,
    imported_key: key.importedKey,
    disallow_sha1: key.disallowSha1 ?? false,
    public_jwks: key.publicJwks ?? false,
    soft_deleted: key.softDeleted ?? false,
  };
  if (key.importedKey) d.imported_key_allow_rotation = key.allowImportedKeyRotation;
  if (key.keySize) d.key_size = key.keySize;
  if (key.derived) {
    d.kdf = key.kdf === 0 ? 'hkdf_sha256' : 'hmac-sha256-counter';
    if (key.kdf === 1) d.kdf_mode = 'hmac-sha256-counter';
    d.convergent_encryption = key.convergentEncryption;
    if (key.convergentEncryption)
      d.convergent_encryption_version = key.convergentVersion === 3 ? -1 : key.convergentVersion;
  }
  if (key.backupInfo) d.backup_info = key.backupInfo;
  if (key.restoreInfo) d.restore_info = key.restoreInfo;
  if (info.kind === 'aead' || info.kind === 'cmac') {
    const keys: Record<string, number> = {};
    for (const [n, v] of sortedLive(key)) keys[String(n)] = Math.floor(v.creationTime);
    d.keys = keys;
  } else if (info.kind === 'asymmetric') {
    const keys: Record<string, unknown> = {};
    for (const [n, v] of sortedLive(key)) {
      keys[String(n)] = {
        name: asymName(key),
        public_key: shownPublicKey(key, v, context),
        certificate_chain: chainText(v),
        creation_time: formatGoTime(v.creationTime),
        hybrid_public_key: '',
      };
    }
    d.keys = keys;
  } else if (info.kind === 'pqc') {
    d.parameter_set = key.parameterSet;
    if (key.type === 'hybrid') {
      d.hybrid_key_type_pqc = 'ml-dsa';
      d.hybrid_key_type_ec = key.hybridEc;
    }
    const keys: Record<string, unknown> = {};
    for (const [n, v] of sortedLive(key)) {
      keys[String(n)] = {
        name: pqVersionName(key),
        public_key: pqPublicKey(key, v).toString('base64'),
        certificate_chain: '',
        creation_time: formatGoTime(v.creationTime),
        hybrid_public_key: key.type === 'hybrid' ? hybridPublicText(v) : '',
      };
    }
    d.keys = keys;
  }
  return d;
}

/** Versions >= min_decryption_version, ascending. */
function sortedLive(key: TransitKey): [number, KeyVersion][] {
  const out: [number, KeyVersion][] = [];
  for (let n = Math.max(1, key.minDecryptionVersion); n <= key.latestVersion; n++) {
    const v = key.versions.get(n);
    if (v) out.push([n, v]);
  }
  return out;
}
