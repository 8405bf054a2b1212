/**
 * One table describes every key type: kind, sizes, what it supports, and Vault's stored type number
 * (reference transit-wire.md section 2; xchacha20-poly1305 uses OpenBao's number 11).
 */
import type { KeyTypeName } from './types.js';

/** Facts about a key type. */
export interface KeyTypeInfo {
  name: KeyTypeName;
  kind: 'aead' | 'asymmetric' | 'hmac' | 'managed' | 'cmac' | 'pqc';
  /** Vault's policy JSON `type` number (backups). */
  vaultId: number;
  /** Key length in bytes for symmetric types. */
  keyBytes?: number;
  /** Nonce length for AEAD types. */
  nonceBytes?: number;
  encrypt: boolean;
  decrypt: boolean;
  derive: boolean;
  sign: boolean;
  hmac: boolean;
  /** Associated data supported (AEAD). */
  aad: boolean;
  /** Public-key-only import allowed. */
  publicImport: boolean;
  /** Convergent encryption allowed. */
  convergent: boolean;
  /** RSA modulus bits / EC curve name. */
  rsaBits?: number;
  curve?: 'P-256' | 'P-384' | 'P-521';
  /** Hash the input before signing unless prehashed (ECDSA, RSA). */
  hashesInput?: boolean;
}

const aead = (name: KeyTypeName, vaultId: number, keyBytes: number, nonceBytes: number): KeyTypeInfo => ({
  name,
  kind: 'aead',
  vaultId,
  keyBytes,
  nonceBytes,
  encrypt: true,
  decrypt: true,
  derive: true,
  sign: false,
  hmac: true,
  aad: true,
  publicImport: false,
  convergent: true,
});
const ec = (name: KeyTypeName, vaultId: number, curve: 'P-256' | 'P-384' | 'P-521'): KeyTypeInfo => ({
  name,
  kind: 'asymmetric',
  vaultId,
  curve,
  encrypt: false,
  decrypt: false,
  derive: false,
  sign: true,
  hmac: true,
  aad: false,
  publicImport: true,
  convergent: false,
  hashesInput: true,
});
const rsa = (name: KeyTypeName, vaultId: number, rsaBits: number): KeyTypeInfo => ({
  name,
  kind: 'asymmetric',
  vaultId,
  rsaBits,
  encrypt: true,
  decrypt: true,
  derive: false,
  sign: true,
  hmac: true,
  aad: false,
  publicImport: true,
  convergent: false,
  hashesInput: true,
});

const cmac = (name: KeyTypeName, vaultId: number, keyBytes: number): KeyTypeInfo => ({
  name,
  kind: 'cmac',
  vaultId,
  keyBytes,
  encrypt: false,
  decrypt: false,
  derive: false,
  sign: false,
  hmac: true,
  aad: false,
  publicImport: false,
  convergent: false,
});

const pqc = (name: KeyTypeName, vaultId: number): KeyTypeInfo => ({
  name,
  kind: 'pqc',
  vaultId,
  encrypt: false,
  decrypt: false,
  derive: false,
  sign: true,
  hmac: true,
  aad: false,
  publicImport: false,
  convergent: false,
  hashesInput: false,
});

/** The key-type table. */
export const KEY_TYPES: Readonly<Record<KeyTypeName, KeyTypeInfo>> = {
  'aes256-gcm96': aead('aes256-gcm96', 0, 32, 12),
  'ecdsa-p256': ec('ecdsa-p256', 1, 'P-256'),
  ed25519: {
    name: 'ed25519',
    kind: 'asymmetric',
    vaultId: 2,
    encrypt: false,
    decrypt: false,
    derive: true,
    sign: true,
    hmac: true,
    aad: false,
    publicImport: true,
    convergent: false,
    hashesInput: false,
  },
  'rsa-2048': rsa('rsa-2048', 3, 2048),
  'rsa-4096': rsa('rsa-4096', 4, 4096),
  'chacha20-poly1305': aead('chacha20-poly1305', 5, 32, 12),
  'ecdsa-p384': ec('ecdsa-p384', 6, 'P-384'),
  'ecdsa-p521': ec('ecdsa-p521', 7, 'P-521'),
  'aes128-gcm96': aead('aes128-gcm96', 8, 16, 12),
  'rsa-3072': rsa('rsa-3072', 9, 3072),
  managed_key: {
    name: 'managed_key',
    kind: 'managed',
    vaultId: 10,
    encrypt: true,
    decrypt: true,
    derive: false,
    sign: true,
    hmac: false,
    aad: true,
    publicImport: false,
    convergent: false,
  },
  hmac: {
    name: 'hmac',
    kind: 'hmac',
    vaultId: 11,
    encrypt: false,
    decrypt: false,
    derive: false,
    sign: false,
    hmac: true,
    aad: false,
    publicImport: false,
    convergent: false,
  },
  // OpenBao's addition (type number 11 there collides with Vault's hmac; keyhold backups write the name too).
  'xchacha20-poly1305': { ...aead('xchacha20-poly1305', 11, 32, 24), vaultId: 111 },
  // Vault Enterprise's CMAC types (its type numbers 12, 13 and 16).
  'aes128-cmac': cmac('aes128-cmac', 12, 16),
  'aes256-cmac': cmac('aes256-cmac', 13, 32),
  'aes192-cmac': cmac('aes192-cmac', 16, 24),
  // Vault Enterprise's post-quantum types (its type numbers 14, 15 and 17).
  'ml-dsa': pqc('ml-dsa', 14),
  hybrid: pqc('hybrid', 15),
  'slh-dsa': pqc('slh-dsa', 17),
};

/** Type info by name, or undefined. */
export function keyTypeInfo(name: string): KeyTypeInfo | undefined {
  return Object.prototype.hasOwnProperty.call(KEY_TYPES, name) ? KEY_TYPES[name as KeyTypeName] : undefined;
}
