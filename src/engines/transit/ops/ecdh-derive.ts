/**
 * ECDH key agreement for OpenBao's `derive-key/:name`: this mount's ECDSA P-256/384/521 private key
 * and a peer's PEM public key on the same curve give the shared secret Z (the x-coordinate, as
 * node:crypto's diffieHellman returns it); the leftmost bytes of Z, as many as the derived type's key
 * size, become the new key's version 1. Z itself never leaves keyhold.
 */
import { createPublicKey, diffieHellman, type KeyObject } from 'node:crypto';
import { invalid } from '../../../framework/errors.js';
import { KEY_TYPES } from '../keyring/key-types.js';
import type { KeyTypeName, TransitKey } from '../keyring/types.js';
import { signingVersion, liveVersion } from './key-versions.js';

/** Types a derived key may have (OpenBao's list). */
export const DERIVED_KEY_TYPES: readonly KeyTypeName[] = [
  'aes128-gcm96',
  'aes256-gcm96',
  'chacha20-poly1305',
  'xchacha20-poly1305',
];

const NODE_CURVE: Record<string, string> = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1' };

/** Parse the peer's PEM public key; 400 naming `peer_public_key` unless it is an EC key on `curve`. */
export function parsePeerPublicKey(pem: string, curve: string): KeyObject {
  let pub: KeyObject;
  try {
    pub = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw invalid('peer_public_key', 'peer_public_key is not a PEM public key');
  }
  if (pub.asymmetricKeyType !== 'ec' || pub.asymmetricKeyDetails?.namedCurve !== NODE_CURVE[curve]) {
    throw invalid('peer_public_key', `peer_public_key must be an EC public key on curve ${curve}`);
  }
  return pub;
}

/** The derived key material of `type` from the base key's version `version` (0 = latest) and the peer's key. */
export function ecdhDerive(base: TransitKey, version: number, peerPem: string, type: KeyTypeName): Buffer {
  const info = KEY_TYPES[base.type];
  if (!info.curve) throw invalid('base_key_name', `base key type ${base.type} does not support key agreement`);
  const ver = signingVersion(base, version);
  const v = liveVersion(base, ver);
  if (!v.privateKey) throw invalid('base_key_name', 'the base key version has no private key (public-key-only import)');
  const peer = parsePeerPublicKey(peerPem, info.curve);
  const z = diffieHellman({ privateKey: v.privateKey, publicKey: peer });
  const size = KEY_TYPES[type].keyBytes!;
  if (z.length < size)
    throw invalid('derived_key_type', `the ${info.curve} shared secret (${z.length} bytes) is too short for ${type}`);
  return Buffer.from(z.subarray(0, size));
}
