import { describe, expect, test } from 'vitest';
import {
  applyConfig,
  checkKeyName,
  checkTrim,
  newKeyConfig,
  parseKeyType,
  rotationRefusal,
  validateCreate,
} from '../../../src/engines/transit/keyring/key-rules.js';
import type { TransitKey } from '../../../src/engines/transit/keyring/types.js';

function key(over: Partial<TransitKey> = {}): TransitKey {
  return { ...newKeyConfig('k', { type: 'aes256-gcm96' }), latestVersion: 5, ...over };
}

describe('create rules', () => {
  test('refuses convergent encryption without derivation, naming convergent_encryption', () => {
    expect(() => validateCreate({ type: 'aes256-gcm96', convergentEncryption: true })).toThrow(
      'convergent_encryption: convergent encryption requires derivation to be enabled',
    );
  });
  test('refuses derivation on types that cannot derive, naming derived', () => {
    for (const t of ['ecdsa-p256', 'rsa-2048', 'hmac'] as const) {
      expect(() => validateCreate({ type: t, derived: true })).toThrow(
        `derived: key derivation and convergent encryption not supported for keys of type ${t}`,
      );
    }
  });
  test('refuses convergent Ed25519 even though Ed25519 derives', () => {
    expect(() => validateCreate({ type: 'ed25519', derived: true, convergentEncryption: true })).toThrow(
      'convergent encryption not supported for keys of type ed25519',
    );
  });
  test('key_size only for hmac and only 32..512', () => {
    expect(() => validateCreate({ type: 'aes256-gcm96', keySize: 64 })).toThrow(
      'key_size: key_size is not valid for algorithm aes256-gcm96',
    );
    expect(() => validateCreate({ type: 'hmac', keySize: 31 })).toThrow(/^key_size: invalid key_size 31/);
    expect(() => validateCreate({ type: 'hmac', keySize: 513 })).toThrow(/^key_size: invalid key_size 513/);
    expect(validateCreate({ type: 'hmac', keySize: 512 }).keySize).toBe(512);
    expect(newKeyConfig('h', { type: 'hmac' }).keySize).toBe(32);
  });
  test('auto_rotate_period must be 0 or at least an hour', () => {
    expect(() => validateCreate({ type: 'aes256-gcm96', autoRotatePeriod: 3599 })).toThrow(
      'auto_rotate_period: auto rotate period must be 0 to disable or at least an hour',
    );
    expect(() => validateCreate({ type: 'aes256-gcm96', autoRotatePeriod: 3600 })).not.toThrow();
  });
  test('managed_key needs the resolved managed key, and refuses derivation and auto-rotation', () => {
    expect(() => validateCreate({ type: 'managed_key' })).toThrow(
      /^managed_key_name: managed_key_name or managed_key_id is required/,
    );
    expect(() => validateCreate({ type: 'managed_key', managedKeyId: 'u', derived: true })).toThrow(
      /key derivation and convergent encryption not supported for keys of type managed_key/,
    );
    expect(() => validateCreate({ type: 'managed_key', managedKeyId: 'u', autoRotatePeriod: 3600 })).toThrow(
      /Auto rotation can not be set for managed keys/,
    );
    expect(validateCreate({ type: 'managed_key', managedKeyId: 'u' }).managedKeyId).toBe('u');
  });
  test('type names are case-insensitive and unknown types name the field', () => {
    expect(parseKeyType('AES128-GCM96')).toBe('aes128-gcm96');
    expect(parseKeyType(undefined)).toBe('aes256-gcm96');
    expect(() => parseKeyType('aes512')).toThrow('type: unknown key type aes512');
  });
  test("key names follow Vault's grammar", () => {
    expect(() => checkKeyName('a.b-c_d')).not.toThrow();
    for (const bad of ['-a', 'a-', 'a b', '.x', 'é']) expect(() => checkKeyName(bad)).toThrow(/^name: /);
  });
});

describe('config rules (spec 2.2, error 9)', () => {
  test("forces a min_decryption_version of 0 to 1 with Vault's warning", () => {
    const k = key();
    expect(applyConfig(k, { minDecryptionVersion: 0 })).toEqual([
      'since Vault 0.3, transit key numbering starts at 1; forcing minimum to 1',
    ]);
    expect(k.minDecryptionVersion).toBe(1);
  });
  test('refuses a min_encryption_version below a non-zero min_decryption_version', () => {
    expect(() => applyConfig(key(), { minDecryptionVersion: 3, minEncryptionVersion: 2 })).toThrow(
      'min_encryption_version: cannot set min encryption/decryption values; min encryption version of 2 must be greater than or equal to min decryption version of 3',
    );
    const k = key();
    applyConfig(k, { minDecryptionVersion: 3, minEncryptionVersion: 0 });
    expect(k.minEncryptionVersion).toBe(0);
  });
  test('refuses versions above the latest and negatives', () => {
    expect(() => applyConfig(key(), { minDecryptionVersion: 6 })).toThrow(
      'cannot set min decryption version of 6, latest key version is 5',
    );
    expect(() => applyConfig(key(), { minEncryptionVersion: 9 })).toThrow(
      'cannot set min encryption version of 9, latest key version is 5',
    );
    expect(() => applyConfig(key(), { minDecryptionVersion: -1 })).toThrow(
      'min_decryption_version: min decryption version cannot be negative',
    );
  });
  test('exportable and allow_plaintext_backup are one-way', () => {
    const k = key();
    applyConfig(k, { exportable: true, allowPlaintextBackup: true });
    applyConfig(k, { exportable: false, allowPlaintextBackup: false });
    expect(k.exportable).toBe(true);
    expect(k.allowPlaintextBackup).toBe(true);
  });
  test('deletion_allowed and disallow_sha1 go both ways', () => {
    const k = key();
    applyConfig(k, { deletionAllowed: true, disallowSha1: true });
    expect([k.deletionAllowed, k.disallowSha1]).toEqual([true, true]);
    applyConfig(k, { deletionAllowed: false, disallowSha1: false });
    expect([k.deletionAllowed, k.disallowSha1]).toEqual([false, false]);
  });
  test('refuses to lower minimums below a trimmed floor', () => {
    const k = key({ minAvailableVersion: 3, minDecryptionVersion: 3, minEncryptionVersion: 4 });
    expect(() => applyConfig(k, { minDecryptionVersion: 2 })).toThrow(
      'min decryption version should not be less then min available version',
    );
  });
});

describe('trim rules (spec section 3, error 9)', () => {
  test('needs both minimums set and stays within them', () => {
    expect(() => checkTrim(key({ minDecryptionVersion: 3, minEncryptionVersion: 0 }), 2)).toThrow(
      'min_available_version: minimum available version cannot be set when minimum encryption version is not set',
    );
    const k = key({ minDecryptionVersion: 3, minEncryptionVersion: 4 });
    expect(() => checkTrim(k, 4)).toThrow('cannot be greater than minimum decryption version');
    expect(() => checkTrim(key({ minDecryptionVersion: 4, minEncryptionVersion: 3 }), 4)).toThrow(
      'cannot be greater than minmum encryption version',
    );
    expect(() => checkTrim(k, 0)).toThrow('minimum available version should be positive');
    expect(() => checkTrim(k, 3)).not.toThrow();
    expect(() => checkTrim({ ...k, minAvailableVersion: 3 }, 2)).toThrow(
      'minimum available version cannot be decremented',
    );
  });
});

describe('rotation', () => {
  test('imported keys rotate only with allow_rotation', () => {
    expect(rotationRefusal(key({ importedKey: true }))).toBe('imported key k does not allow rotation within Vault');
    expect(rotationRefusal(key({ importedKey: true, allowImportedKeyRotation: true }))).toBeNull();
    expect(rotationRefusal(key())).toBeNull();
  });
});
