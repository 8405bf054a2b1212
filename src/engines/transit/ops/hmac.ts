/**
 * HMAC generation and verification (reference transit-wire.md section 4.5): `vault:v<ver>:` +
 * base64(HMAC-H(hmacKey, input)); every type uses the version's own 32-byte `hmac_key`, the `hmac`
 * type its `key`. Verification recomputes with the version in the prefix, in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalid } from '../../../framework/errors.js';
import type { TransitKey } from '../keyring/types.js';
import type { HashAlgorithm } from './hash-algorithms.js';
import { hashAlgorithm } from './hash-algorithms.js';
import { hmacVersion, liveVersion } from './key-versions.js';
import { decodeStdBase64, parseVersioned, versionPrefix } from './version-prefix.js';

/** The HMAC algorithm named `name`, or Vault's 400 (`none` is refused too: it maps to no hash). */
export function hmacAlgorithm(name: string): HashAlgorithm {
  const alg = hashAlgorithm(name);
  if (!alg || !alg.hmac) throw invalid(`unsupported algorithm ${name}`);
  return alg;
}

function hmacKeyOf(key: TransitKey, version: number): Buffer {
  if (key.type === 'managed_key') throw invalid('HMAC is not supported for managed keys');
  const v = liveVersion(key, version);
  const k = key.type === 'hmac' ? v.key : v.hmacKey;
  if (!k || k.length === 0) throw invalid('no HMAC key exists for that key version');
  return k;
}

/** HMAC of `input` with version `requested` (0 = latest); returns `vault:vN:<b64>`. */
export function hmacWithKey(key: TransitKey, alg: HashAlgorithm, input: Buffer, requested = 0): string {
  const ver = hmacVersion(key, requested);
  const mac = createHmac(alg.node!, hmacKeyOf(key, ver)).update(input).digest();
  return versionPrefix(ver) + mac.toString('base64');
}

/** Check an HMAC made by `hmacWithKey` (or Vault) over `input`; malformed values throw Vault's errors. */
export function verifyHmacWithKey(key: TransitKey, alg: HashAlgorithm, input: Buffer, hmac: string): boolean {
  const { version, payload } = parseVersioned(hmac, 'hmac', key);
  const given = decodeStdBase64(payload);
  if (!given) throw invalid('invalid HMAC: could not decode base64');
  const mac = createHmac(alg.node!, hmacKeyOf(key, version)).update(input).digest();
  return given.length === mac.length && timingSafeEqual(given, mac);
}
