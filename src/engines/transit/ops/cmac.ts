/**
 * CMAC generation and verification for the aes128/192/256-cmac key types, on Vault Enterprise's API
 * (`cmac/:name(/:url_mac_length)`, verify's `cmac` field): `vault:v<ver>:` + base64 of the AES-CMAC
 * of the input under the version's key, truncated to `mac_length` bytes (0 = the full 16).
 */
import { timingSafeEqual } from 'node:crypto';
import { invalid } from '../../../framework/errors.js';
import { KEY_TYPES } from '../keyring/key-types.js';
import type { TransitKey } from '../keyring/types.js';
import { CMAC_BLOCK, aesCmac } from './aes-cmac.js';
import { hmacVersion, liveVersion } from './key-versions.js';
import { decodeStdBase64, parseVersioned, versionPrefix } from './version-prefix.js';

/** 400 unless the key is a CMAC key. */
export function checkCmacKey(key: TransitKey): void {
  if (KEY_TYPES[key.type].kind !== 'cmac') throw invalid(`CMAC is not supported for key type ${key.type}`);
}

/** The MAC length to use: 0 = the block size; 1-16 else 400 naming `mac_length`. */
export function cmacLength(requested: number | undefined): number {
  const n = requested ?? 0;
  if (!Number.isInteger(n) || n < 0) throw invalid('mac_length', `invalid mac_length ${n}: must not be negative`);
  if (n > CMAC_BLOCK)
    throw invalid('mac_length', `mac_length ${n} is larger than the cipher's block size (${CMAC_BLOCK})`);
  return n === 0 ? CMAC_BLOCK : n;
}

function cmacKeyOf(key: TransitKey, version: number): Buffer {
  const k = liveVersion(key, version).key;
  if (!k) throw invalid('no CMAC key exists for that key version');
  return k;
}

/** CMAC of `input` with version `requested` (0 = latest; below min_encryption_version refused). */
export function cmacWithKey(key: TransitKey, input: Buffer, macLength: number, requested = 0): string {
  checkCmacKey(key);
  const ver = hmacVersion(key, requested);
  return versionPrefix(ver) + aesCmac(cmacKeyOf(key, ver), input, cmacLength(macLength)).toString('base64');
}

/**
 * Check a CMAC over `input` in constant time. The MAC length is the given `mac_length` when set,
 * else the decoded length of the value (so truncated CMACs verify without repeating the length).
 */
export function verifyCmacWithKey(key: TransitKey, input: Buffer, cmac: string, macLength?: number): boolean {
  checkCmacKey(key);
  const { version, payload } = parseVersioned(cmac, 'cmac', key);
  const given = decodeStdBase64(payload);
  if (!given) throw invalid('invalid CMAC: could not decode base64');
  const len = macLength ? cmacLength(macLength) : given.length;
  if (len < 1 || len > CMAC_BLOCK) return false;
  const mac = aesCmac(cmacKeyOf(key, version), input, len);
  return given.length === mac.length && timingSafeEqual(given, mac);
}
