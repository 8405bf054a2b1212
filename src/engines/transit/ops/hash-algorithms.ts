/**
 * Hash algorithm names on the wire and what each is good for (reference transit-wire.md section 4.8).
 * Names are case-sensitive, as in Vault.
 */

/** Facts about one wire hash name. */
export interface HashAlgorithm {
  /** Wire name (`sha2-256`). */
  name: string;
  /** node:crypto digest name; null for `none`. */
  node: string | null;
  /** Digest length in bytes (0 for `none`). */
  size: number;
  /** Usable with sign/verify. */
  sign: boolean;
  /** Usable with hmac. */
  hmac: boolean;
  /** Usable with the hash endpoint. */
  hash: boolean;
  /** DER DigestInfo prefix (RFC 8017 section 9.2 note 1) for PKCS#1 v1.5 over a prehashed digest. */
  digestInfo: string;
}

const h = (name: string, node: string | null, size: number, hash: boolean, digestInfo: string): HashAlgorithm => ({
  name,
  node,
  size,
  sign: true,
  hmac: node !== null,
  hash,
  digestInfo,
});

/** The hash table (sha1 legacy; sha3 not FIPS; `none` only for RSA pkcs1v15 with prehashed input). */
export const HASH_ALGORITHMS: Readonly<Record<string, HashAlgorithm>> = {
  sha1: h('sha1', 'sha1', 20, false, '3021300906052b0e03021a05000414'),
  'sha2-224': h('sha2-224', 'sha224', 28, true, '302d300d06096086480165030402040500041c'),
  'sha2-256': h('sha2-256', 'sha256', 32, true, '3031300d060960864801650304020105000420'),
  'sha2-384': h('sha2-384', 'sha384', 48, true, '3041300d060960864801650304020205000430'),
  'sha2-512': h('sha2-512', 'sha512', 64, true, '3051300d060960864801650304020305000440'),
  'sha3-224': h('sha3-224', 'sha3-224', 28, true, '302d300d06096086480165030402070500041c'),
  'sha3-256': h('sha3-256', 'sha3-256', 32, true, '3031300d060960864801650304020805000420'),
  'sha3-384': h('sha3-384', 'sha3-384', 48, true, '3041300d060960864801650304020905000430'),
  'sha3-512': h('sha3-512', 'sha3-512', 64, true, '3051300d060960864801650304020a05000440'),
  none: h('none', null, 0, false, ''),
};

/** The algorithm named `name`, or undefined (own properties only). */
export function hashAlgorithm(name: string): HashAlgorithm | undefined {
  return Object.prototype.hasOwnProperty.call(HASH_ALGORITHMS, name) ? HASH_ALGORITHMS[name] : undefined;
}
