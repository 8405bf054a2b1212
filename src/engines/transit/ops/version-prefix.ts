/**
 * The `vault:v<N>:` prefix on ciphertexts, signatures and HMACs (reference transit-wire.md section 4.1),
 * with Vault's exact error strings per kind of value, and Go-strict base64 codecs.
 */
import { invalid } from '../../../framework/errors.js';

/** Which value is being parsed; selects the error wording. */
export type VersionedKind = 'ciphertext' | 'signature' | 'hmac' | 'cmac';

/** Vault's "too old" error, shared by decrypt, verify and rewrap (keysutil ErrTooOld). */
export const ERR_TOO_OLD = 'ciphertext or signature version is disallowed by policy (too old)';

const MESSAGES: Record<
  VersionedKind,
  { noPrefix: string; fields: string; number: string; tooNew: string; tooOld: string }
> = {
  ciphertext: {
    noPrefix: 'invalid ciphertext: no prefix',
    fields: 'invalid ciphertext: wrong number of fields',
    number: 'invalid ciphertext: version number could not be decoded',
    tooNew: 'invalid ciphertext: version is too new',
    tooOld: ERR_TOO_OLD,
  },
  signature: {
    noPrefix: 'invalid signature: no prefix',
    fields: 'invalid signature: wrong number of fields',
    number: 'invalid signature: version number could not be decoded',
    tooNew: 'invalid signature: version is too new',
    tooOld: ERR_TOO_OLD,
  },
  hmac: {
    noPrefix: 'invalid HMAC to verify: no prefix',
    fields: 'invalid HMAC: wrong number of fields',
    number: 'invalid HMAC: version number could not be decoded',
    tooNew: 'invalid HMAC: version is too new',
    tooOld: 'cannot verify HMAC: version is too old (disallowed by policy)',
  },
  cmac: {
    noPrefix: 'invalid CMAC to verify: no prefix',
    fields: 'invalid CMAC: wrong number of fields',
    number: 'invalid CMAC: version number could not be decoded',
    tooNew: 'invalid CMAC: version is too new',
    tooOld: 'cannot verify CMAC: version is too old (disallowed by policy)',
  },
};

/** The prefix for version `v`. */
export function versionPrefix(v: number): string {
  return `vault:v${v}:`;
}

/** A parsed versioned value. */
export interface Versioned {
  version: number;
  /** The text after the prefix (still encoded). */
  payload: string;
}

/**
 * Split `vault:v<N>:<payload>` and check N against the key's versions: `N > latest` is too new,
 * `N < minDecryptionVersion` too old. A ciphertext version 0 means 1 (Vault's first releases).
 */
export function parseVersioned(
  value: string,
  kind: VersionedKind,
  key: { latestVersion: number; minDecryptionVersion: number },
): Versioned {
  const m = MESSAGES[kind];
  if (!value.startsWith('vault:v')) throw invalid(m.noPrefix);
  const rest = value.slice(7);
  const colon = rest.indexOf(':');
  if (colon === -1) throw invalid(m.fields);
  const num = rest.slice(0, colon);
  // Go strconv.Atoi: optional sign, decimal digits, fits in int64.
  if (!/^[+-]?\d{1,18}$/.test(num)) throw invalid(m.number);
  let version = Number(num);
  if (version === 0 && kind === 'ciphertext') version = 1;
  if (version > key.latestVersion) throw invalid(m.tooNew);
  if (key.minDecryptionVersion > 0 && version < key.minDecryptionVersion) throw invalid(m.tooOld);
  return { version, payload: rest.slice(colon + 1) };
}

/** Standard padded base64 as Go's StdEncoding reads it (CR/LF ignored); null when malformed. */
export function decodeStdBase64(s: string): Buffer | null {
  const t = s.includes('\n') || s.includes('\r') ? s.replace(/[\r\n]/g, '') : s;
  if (t.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(t)) return null;
  // Go's StdEncoding is not in Strict mode: non-zero trailing bits are tolerated, as here.
  return Buffer.from(t, 'base64');
}

/** Unpadded URL-safe base64 (Go RawURLEncoding); null when malformed. */
export function decodeRawUrlBase64(s: string): Buffer | null {
  if (!/^[A-Za-z0-9_-]*$/.test(s) || s.length % 4 === 1) return null;
  return Buffer.from(s, 'base64url');
}
