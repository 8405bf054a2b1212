/**
 * The rules of a key's life (spec sections 2.1-2.2 and 3; reference transit-wire.md sections 3.1.1,
 * 3.1.4, 3.1.6): what may be created, how configuration may change, how far a key may be trimmed.
 * Pure functions over the key model; no storage, no HTTP. Messages name the field and keep Vault's words.
 */
import { invalid } from '../../../framework/errors.js';
import { KEY_TYPES, keyTypeInfo } from './key-types.js';
import { HMAC_KEY_SIZE } from './material.js';
import type { CreateKeyOptions, KeyTypeName, TransitKey } from './types.js';

/** Minimum non-zero auto-rotation period, seconds (spec section 8). */
export const MIN_AUTO_ROTATE_SECONDS = 3600;

/** Key-name grammar of Vault's framework (`GenericNameRegex`). */
export const KEY_NAME_RE = /^\w(?:[\w.-]*\w)?$/;

/** 400 unless `name` is a valid key name. */
export function checkKeyName(name: string): void {
  if (!KEY_NAME_RE.test(name))
    throw invalid(
      'name',
      `key names must be letters, digits, "_", "-" or "." and start and end with a letter, digit or "_", got "${name.slice(0, 64)}"`,
    );
}

/** Resolve a type name (case-insensitive) or throw 400 naming `type`. */
export function parseKeyType(raw: string | undefined, field = 'type'): KeyTypeName {
  const name = (raw ?? 'aes256-gcm96').toLowerCase();
  const info = keyTypeInfo(name);
  if (!info) throw invalid(field, `unknown key type ${raw}`);
  return info.name;
}

/** 400 unless the period is 0 or at least an hour. */
export function checkAutoRotatePeriod(seconds: number): void {
  if (seconds !== 0 && seconds < MIN_AUTO_ROTATE_SECONDS) {
    throw invalid('auto_rotate_period', 'auto rotate period must be 0 to disable or at least an hour');
  }
}

/** Validate creation options; returns the normalised options. */
export function validateCreate(opts: CreateKeyOptions): Required<Pick<CreateKeyOptions, 'type'>> & CreateKeyOptions {
  const info = KEY_TYPES[opts.type];
  if (!info) throw invalid('type', `unknown key type ${String(opts.type)}`);
  if (info.kind === 'managed') {
    // Vault's lock manager refuses these for managed keys (reference managed-keys-wire.md 2.1).
    if (opts.derived || opts.convergentEncryption)
      throw invalid('derived', 'key derivation and convergent encryption not supported for keys of type managed_key');
    if (opts.autoRotatePeriod) throw invalid('auto_rotate_period', 'Auto rotation can not be set for managed keys');
    if (!opts.managedKeyId)
      throw invalid('managed_key_name', 'managed_key_name or managed_key_id is required for keys of type managed_key');
  }
  if (opts.convergentEncryption && !opts.derived) {
    throw invalid('convergent_encryption', 'convergent encryption requires derivation to be enabled');
  }
  if ((opts.derived || opts.convergentEncryption) && !info.derive) {
    throw invalid('derived', `key derivation and convergent encryption not supported for keys of type ${opts.type}`);
  }
  if (opts.convergentEncryption && !info.convergent) {
    throw invalid('convergent_encryption', `convergent encryption not supported for keys of type ${opts.type}`);
  }
  if (opts.keySize) {
    if (info.kind !== 'hmac') throw invalid('key_size', `key_size is not valid for algorithm ${opts.type}`);
    if (opts.keySize < HMAC_KEY_SIZE.min || opts.keySize > HMAC_KEY_SIZE.max) {
      throw invalid(
        'key_size',
        `invalid key_size ${opts.keySize}: must be between ${HMAC_KEY_SIZE.min} and ${HMAC_KEY_SIZE.max} bytes`,
      );
    }
  }
  checkAutoRotatePeriod(opts.autoRotatePeriod ?? 0);
  if (info.kind === 'pqc' && !opts.parameterSet)
    throw invalid('parameter_set', `parameter_set is required for keys of type ${opts.type}`);
  if (opts.type === 'hybrid' && !opts.hybridEc)
    throw invalid('hybrid_key_type_ec', 'hybrid_key_type_ec is required for keys of type hybrid');
  return opts;
}

/** A new key's configuration (without versions) from validated options. */
export function newKeyConfig(name: string, opts: CreateKeyOptions): TransitKey {
  const convergent = opts.convergentEncryption ?? false;
  return {
    name,
    type: opts.type,
    derived: opts.derived ?? false,
    kdf: 0,
    convergentEncryption: convergent,
    convergentVersion: convergent ? 3 : 0,
    exportable: opts.exportable ?? false,
    allowPlaintextBackup: opts.allowPlaintextBackup ?? false,
    deletionAllowed: false,
    minDecryptionVersion: 1,
    minEncryptionVersion: 0,
    minAvailableVersion: 0,
    latestVersion: 0,
    autoRotatePeriod: opts.autoRotatePeriod ?? 0,
    importedKey: false,
    allowImportedKeyRotation: false,
    ...(KEY_TYPES[opts.type].kind === 'hmac' ? { keySize: opts.keySize || HMAC_KEY_SIZE.default } : {}),
    ...(opts.parameterSet ? { parameterSet: opts.parameterSet } : {}),
    ...(opts.hybridEc ? { hybridEc: opts.hybridEc } : {}),
    versions: new Map(),
  };
}

/** Requested changes of `keys/:name/config` (undefined = unchanged). */
export interface KeyConfigChange {
  minDecryptionVersion?: number;
  minEncryptionVersion?: number;
  deletionAllowed?: boolean;
  exportable?: boolean;
  allowPlaintextBackup?: boolean;
  autoRotatePeriod?: number;
  disallowSha1?: boolean;
  publicJwks?: boolean;
}

/** Apply a configuration change to a copy of the key; returns the warnings. Throws 400 on a broken rule. */
export function applyConfig(key: TransitKey, c: KeyConfigChange): string[] {
  const warnings: string[] = [];
  let changed = false;
  if (c.minDecryptionVersion !== undefined) {
    let v = c.minDecryptionVersion;
    if (v < 0) throw invalid('min_decryption_version', 'min decryption version cannot be negative');
    if (v === 0) {
      v = 1;
      warnings.push('since Vault 0.3, transit key numbering starts at 1; forcing minimum to 1');
    }
    if (v > key.latestVersion) {
      throw invalid(
        'min_decryption_version',
        `cannot set min decryption version of ${v}, latest key version is ${key.latestVersion}`,
      );
    }
    if (v !== key.minDecryptionVersion) {
      key.minDecryptionVersion = v;
      changed = true;
    }
  }
  if (c.minEncryptionVersion !== undefined) {
    const v = c.minEncryptionVersion;
    if (v < 0) throw invalid('min_encryption_version', 'min encryption version cannot be negative');
    if (v > key.latestVersion) {
      throw invalid(
        'min_encryption_version',
        `cannot set min encryption version of ${v}, latest key version is ${key.latestVersion}`,
      );
    }
    if (v !== key.minEncryptionVersion) {
      key.minEncryptionVersion = v;
      changed = true;
    }
  }
  if (key.minEncryptionVersion > 0 && key.minEncryptionVersion < key.minDecryptionVersion) {
    throw invalid(
      'min_encryption_version',
      `cannot set min encryption/decryption values; min encryption version of ${key.minEncryptionVersion} must be greater than or equal to min decryption version of ${key.minDecryptionVersion}`,
    );
  }
  if (c.deletionAllowed !== undefined && c.deletionAllowed !== key.deletionAllowed) {
    key.deletionAllowed = c.deletionAllowed;
    changed = true;
  }
  // One-way flags: `false` is ignored once set (spec 2.2).
  if (c.exportable && !key.exportable) {
    key.exportable = true;
    changed = true;
  }
  if (c.allowPlaintextBackup && !key.allowPlaintextBackup) {
    key.allowPlaintextBackup = true;
    changed = true;
  }
  if (c.autoRotatePeriod !== undefined && c.autoRotatePeriod !== key.autoRotatePeriod) {
    checkAutoRotatePeriod(c.autoRotatePeriod);
    // Vault's keys/:name/config answer for managed keys (reference managed-keys-wire.md 2.1).
    if (c.autoRotatePeriod !== 0 && KEY_TYPES[key.type].kind === 'managed')
      throw invalid('auto_rotate_period', 'Auto rotation can not be set for managed keys');
    if (c.autoRotatePeriod !== 0 && key.importedKey && !key.allowImportedKeyRotation) {
      throw invalid(
        'auto_rotate_period',
        `imported key ${key.name} does not allow rotation (allow_rotation is false), so auto-rotation cannot be enabled`,
      );
    }
    key.autoRotatePeriod = c.autoRotatePeriod;
    changed = true;
  }
  if (c.disallowSha1 !== undefined && c.disallowSha1 !== (key.disallowSha1 ?? false)) {
    key.disallowSha1 = c.disallowSha1;
    changed = true;
  }
  if (c.publicJwks !== undefined && c.publicJwks !== (key.publicJwks ?? false)) {
    if (
      c.publicJwks &&
      key.type !== 'ml-dsa' &&
      (KEY_TYPES[key.type].kind !== 'asymmetric' || !KEY_TYPES[key.type].sign)
    )
      throw invalid('public_jwks', `key type ${key.type} has no public keys to publish`);
    key.publicJwks = c.publicJwks;
    changed = true;
  }
  if (changed && key.minAvailableVersion > 0) {
    if (key.minEncryptionVersion > 0 && key.minEncryptionVersion < key.minAvailableVersion) {
      throw invalid('min_encryption_version', 'min encryption version should not be less than min available version');
    }
    if (key.minDecryptionVersion < key.minAvailableVersion) {
      throw invalid('min_decryption_version', 'min decryption version should not be less then min available version');
    }
  }
  return warnings;
}

/** Check a trim request (spec section 3, reference 3.1.6); throws 400 naming `min_available_version`. */
export function checkTrim(key: TransitKey, minAvailable: number): void {
  const bad = (rule: string) => invalid('min_available_version', rule);
  if (minAvailable < key.minAvailableVersion) throw bad('minimum available version cannot be decremented');
  if (key.minEncryptionVersion === 0)
    throw bad('minimum available version cannot be set when minimum encryption version is not set');
  if (key.minDecryptionVersion === 0)
    throw bad('minimum available version cannot be set when minimum decryption version is not set');
  if (minAvailable > key.minEncryptionVersion)
    throw bad('minimum available version cannot be greater than minmum encryption version');
  if (minAvailable > key.minDecryptionVersion)
    throw bad('minimum available version cannot be greater than minimum decryption version');
  if (minAvailable < 0) throw bad('minimum available version cannot be negative');
  if (minAvailable === 0) throw bad('minimum available version should be positive');
}

/** Whether the key may be rotated now (imported keys need allow_rotation); returns a refusal message or null. */
export function rotationRefusal(key: TransitKey, managedKeyId?: string): string | null {
  if (key.importedKey && !key.allowImportedKeyRotation)
    return `imported key ${key.name} does not allow rotation within Vault`;
  if (KEY_TYPES[key.type].kind === 'managed' && !managedKeyId)
    return 'managed_key_name or managed_key_id is required to rotate a key of type managed_key';
  return null;
}

/** Copy a key's configuration (the versions map is shared, not copied). */
export function cloneConfig(key: TransitKey): TransitKey {
  return {
    ...key,
    backupInfo: key.backupInfo && { ...key.backupInfo },
    restoreInfo: key.restoreInfo && { ...key.restoreInfo },
  };
}
