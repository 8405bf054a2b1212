/**
 * JWKS and JWTs from transit signing keys (issue 17 part 2): the public keys of a key as a JWK Set
 * (RFC 7517), one JWK per version valid for verification, `kid` = the RFC 7638 SHA-256 thumbprint
 * of that version's public JWK (stable per version, different across keys), and compact JWS
 * (RFC 7515) JWTs (RFC 7519) signed and verified inside keyhold with node:crypto. One algorithm per
 * key type (RFC 7518 3.1, RFC 8037): the JWK Set advertises it and verification accepts no other.
 * No HTTP here.
 */
import { pqPublicKey } from '../pq/pq-material.js';
import { pqSignAsync, pqVerify } from '../pq/pq-signing.js';
import { createHash, sign as nodeSign, verify as nodeVerify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { invalid } from '../../../framework/errors.js';
import { parseDuration } from '../../../framework/fields.js';
import type { KeyTypeName, KeyVersion, TransitKey } from '../keyring/types.js';
import { signingVersion } from './key-versions.js';

const signAsync = promisify(nodeSign);

/** JWS algorithm per signing key type: name and the hash node:crypto signs with (null: EdDSA). */
export const JWT_ALGORITHMS: Partial<Record<KeyTypeName, { alg: string; hash: string | null }>> = {
  ed25519: { alg: 'EdDSA', hash: null },
  'ecdsa-p256': { alg: 'ES256', hash: 'sha256' },
  'ecdsa-p384': { alg: 'ES384', hash: 'sha384' },
  'ecdsa-p521': { alg: 'ES512', hash: 'sha512' },
  'rsa-2048': { alg: 'RS256', hash: 'sha256' },
  'rsa-3072': { alg: 'RS256', hash: 'sha256' },
  'rsa-4096': { alg: 'RS256', hash: 'sha256' },
};

/** Claims keyhold sets itself; a caller passes `ttl` instead. */
const OWN_CLAIMS = ['iat', 'exp'] as const;
/** Default lifetime of a signed JWT, seconds. */
export const DEFAULT_JWT_TTL = 3600;
/** Largest JWT accepted by verify (characters): far above any real token, far below the request limit. */
const MAX_TOKEN = 64 * 1024;

/** The key's JWS algorithm; 400 for keys that cannot sign JWTs. */
export function jwtAlgorithm(key: TransitKey): { alg: string; hash: string | null } {
  if (key.type === 'ml-dsa') return { alg: `ML-DSA-${key.parameterSet}`, hash: null };
  const a = JWT_ALGORITHMS[key.type];
  if (!a)
    throw invalid(
      `key type ${key.type} cannot sign JWTs; use ed25519, ecdsa-p256/p384/p521, rsa-2048/3072/4096 or ml-dsa`,
    );
  if (key.derived)
    throw invalid(`key ${key.name} is derived (its public key depends on a context), so it has no JWK Set`);
  return a;
}

/** Public JWK members per RFC 7638 3.2 (the thumbprint's input), from node's export. */
function requiredMembers(jwk: JsonWebKey): Record<string, string> {
  if (jwk.kty === 'RSA') return { e: jwk.e!, kty: 'RSA', n: jwk.n! };
  if (jwk.kty === 'EC') return { crv: jwk.crv!, kty: 'EC', x: jwk.x!, y: jwk.y! };
  return { crv: jwk.crv!, kty: jwk.kty!, x: jwk.x! };
}

/** Public JWK (with kid) per public KeyObject, computed once. */
const jwkCache = new WeakMap<KeyObject, Record<string, string>>();

/** JWS algorithm of a public JWK's key (EdDSA, ES256/384/512; RS256 for RSA), as JWT_ALGORITHMS has it. */
function algOfJwk(jwk: Record<string, string>): string {
  if (jwk.kty === 'RSA') return 'RS256';
  if (jwk.kty === 'OKP') return 'EdDSA';
  return { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }[jwk.crv!] ?? '';
}

/**
 * The public JWK of a public key with `kid` (RFC 7638 SHA-256 thumbprint), `alg` and `use: sig`.
 * Also used by the CLI (`transit keys export public-key --format jwk`), so both compute one kid.
 */
export function publicJwk(pub: KeyObject): Record<string, string> {
  let base = jwkCache.get(pub);
  if (!base) {
    const members = requiredMembers(pub.export({ format: 'jwk' }));
    // RFC 7638: JSON of the required members in lexicographic order, no whitespace; SHA-256; base64url.
    const kid = createHash('sha256').update(JSON.stringify(members)).digest('base64url');
    base = { ...members, kid, alg: algOfJwk(members), use: 'sig' };
    jwkCache.set(pub, base);
  }
  return { ...base };
}

/** Does the version carry a public key a JWT verifies with? */
function hasPublic(key: TransitKey, v: KeyVersion): boolean {
  return key.type === 'ml-dsa' ? v.key !== undefined : v.publicKey !== undefined;
}

const akpCache = new WeakMap<Buffer, Record<string, string>>();

/**
 * The JWK of an ML-DSA version: key type `AKP` with `alg` ML-DSA-44/65/87 and `pub` (the raw public key,
 * base64url), as draft-ietf-cose-dilithium registers them for JOSE; kid = RFC 7638 thumbprint over
 * the required members alg, kty, pub.
 */
function mlDsaJwk(key: TransitKey, v: KeyVersion): Record<string, string> {
  let base = akpCache.get(v.key!);
  if (!base) {
    const members = { alg: `ML-DSA-${key.parameterSet}`, kty: 'AKP', pub: pqPublicKey(key, v).toString('base64url') };
    base = { ...members, kid: createHash('sha256').update(JSON.stringify(members)).digest('base64url'), use: 'sig' };
    akpCache.set(v.key!, base);
  }
  return { ...base };
}

/** The public JWK of a version with `kid`, `alg` and `use`. */
export function versionJwk(key: TransitKey, v: KeyVersion): Record<string, string> {
  if (!hasPublic(key, v)) throw invalid(`key version ${v.version} has no public key`);
  jwtAlgorithm(key);
  return key.type === 'ml-dsa' ? mlDsaJwk(key, v) : publicJwk(v.publicKey!);
}

/** Versions valid for verification (min_decryption_version..latest, loaded), ascending. */
function verifiableVersions(key: TransitKey): KeyVersion[] {
  const out: KeyVersion[] = [];
  for (let n = Math.max(1, key.minDecryptionVersion); n <= key.latestVersion; n++) {
    const v = key.versions.get(n);
    if (v && hasPublic(key, v)) out.push(v);
  }
  return out;
}

/** The key's JWK Set: one JWK per version still valid for verification. */
export function jwksOf(key: TransitKey): { keys: Record<string, string>[] } {
  jwtAlgorithm(key);
  return { keys: verifiableVersions(key).map((v) => versionJwk(key, v)) };
}

/** Options of one JWT signature. */
export interface JwtSignOptions {
  claims: Record<string, unknown>;
  header?: Record<string, unknown>;
  /** Seconds; undefined = DEFAULT_JWT_TTL. */
  ttl?: number;
  iss?: string;
  aud?: string[];
  /** 0 = latest. */
  keyVersion?: number;
  /** Unix seconds. */
  now: number;
  /** Sign on the thread pool even for curves (batch items). */
  offload?: boolean;
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** Sign a JWT with the key (latest version unless `keyVersion`); returns the compact JWS and what went in it. */
export async function signJwt(
  key: TransitKey,
  o: JwtSignOptions,
): Promise<{ token: string; kid: string; version: number }> {
  const { alg, hash } = jwtAlgorithm(key);
  const version = signingVersion(key, o.keyVersion ?? 0);
  const v = key.versions.get(version);
  if (!v || !(key.type === 'ml-dsa' ? v.key : v.privateKey))
    throw invalid(`key version ${version} holds no private key (public-key import), so it cannot sign`);
  const jwk = versionJwk(key, v);
  const header = { ...(o.header ?? {}) };
  if (header.alg !== undefined && header.alg !== alg)
    throw invalid(
      'header',
      `alg ${JSON.stringify(header.alg)} does not match key type ${key.type}, which signs ${alg}`,
    );
  if (header.kid !== undefined && header.kid !== jwk.kid)
    throw invalid('header', `kid is set by keyhold (${jwk.kid} for version ${version}); leave it out`);
  if (header.crit !== undefined) throw invalid('header', 'crit is not supported');
  if (header.b64 !== undefined) throw invalid('header', 'b64 is not supported (RFC 7797 unencoded payloads)');
  const claims = { ...o.claims };
  for (const c of OWN_CLAIMS)
    if (c in claims) throw invalid('claims', `${c} is set by keyhold; use ttl for the lifetime`);
  if (o.iss !== undefined) {
    if (claims.iss !== undefined && claims.iss !== o.iss)
      throw invalid('iss', 'differs from claims.iss; give one of them');
    claims.iss = o.iss;
  }
  if (o.aud !== undefined && o.aud.length) {
    if (claims.aud !== undefined) throw invalid('aud', 'claims.aud is set too; give one of them');
    claims.aud = o.aud.length === 1 ? o.aud[0] : o.aud;
  }
  const ttl = o.ttl ?? DEFAULT_JWT_TTL;
  if (ttl <= 0) throw invalid('ttl', 'must be positive');
  const iat = Math.floor(o.now);
  claims.iat = iat;
  claims.exp = iat + Math.ceil(ttl);
  const protectedHeader = { ...header, alg, kid: jwk.kid, typ: header.typ ?? 'JWT' };
  const input = `${b64url(protectedHeader)}.${b64url(claims)}`;
  if (key.type === 'ml-dsa') {
    const sig = await pqSignAsync(key, v, Buffer.from(input), { prehashed: false, hash: '' });
    return { token: `${input}.${sig.toString('base64url')}`, kid: jwk.kid!, version };
  }
  const keyInput = { key: v.privateKey!, dsaEncoding: 'ieee-p1363' as const };
  // RSA takes milliseconds and batch items are many: those sign on libuv's thread pool (node:crypto's
  // callback form), so the event loop keeps serving and a batch uses every core. One curve
  // signature takes microseconds: inline, cheaper than the hop to the pool.
  const sig =
    o.offload || key.type.startsWith('rsa-')
      ? await signAsync(hash, Buffer.from(input), keyInput)
      : nodeSign(hash, Buffer.from(input), keyInput);
  return { token: `${input}.${sig.toString('base64url')}`, kid: jwk.kid, version };
}

/** Most items one jwt/sign request may carry. */
export const MAX_JWT_BATCH = 10_000;

/** One `batch_input` item of jwt/sign as options (400 naming `batch_input[i].field` when malformed). */
export function parseJwtItem(
  item: unknown,
  i: number,
): Pick<JwtSignOptions, 'claims' | 'header' | 'ttl' | 'iss' | 'aud'> {
  const at = (f: string) => `batch_input[${i}].${f}`;
  const isObject = (v: unknown): v is Record<string, unknown> =>
    Boolean(v) && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(item)) throw invalid(`batch_input[${i}]`, 'expected an object');
  if (!isObject(item.claims)) throw invalid(at('claims'), 'expected an object');
  if (item.header !== undefined && !isObject(item.header)) throw invalid(at('header'), 'expected an object');
  if (item.iss !== undefined && typeof item.iss !== 'string') throw invalid(at('iss'), 'expected a string');
  let aud: string[] | undefined;
  if (typeof item.aud === 'string') aud = [item.aud];
  else if (Array.isArray(item.aud) && item.aud.every((a) => typeof a === 'string')) aud = item.aud as string[];
  else if (item.aud !== undefined) throw invalid(at('aud'), 'expected a string or a list of strings');
  const ttl = item.ttl === undefined ? undefined : parseDuration(at('ttl'), item.ttl);
  return {
    claims: item.claims,
    header: item.header as Record<string, unknown> | undefined,
    ttl,
    iss: item.iss as string | undefined,
    aud,
  };
}

/** Options of a JWT verification. */
export interface JwtVerifyOptions {
  /** Expected issuer, when given. */
  iss?: string;
  /** Accepted audiences: one must appear in the token's aud, when given. */
  aud?: string[];
  /** Unix seconds. */
  now: number;
  /** Seconds of clock skew tolerated for exp/nbf/iat. */
  leeway?: number;
}

/** Outcome of a verification that got as far as the signature. */
export interface JwtVerifyResult {
  valid: boolean;
  /** Why not valid (signature, exp, nbf, iss, aud). */
  error?: string;
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  version: number;
}

function decodeJson(part: string, what: string): Record<string, unknown> {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) throw invalid('token', `${what} is not base64url`);
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw invalid('token', `${what} is not JSON`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw invalid('token', `${what} is not a JSON object`);
  return v as Record<string, unknown>;
}

/**
 * Verify a compact JWS against the key: structure, `alg` (the key's only), `kid` (a version valid
 * for verification), signature, then `exp`/`nbf` and the expected `iss`/`aud`. Structural problems
 * are 400s naming the cause; a bad signature or an expired token is `valid: false` with the reason.
 */
export function verifyJwt(key: TransitKey, token: string, o: JwtVerifyOptions): JwtVerifyResult {
  const { alg, hash } = jwtAlgorithm(key);
  if (token.length > MAX_TOKEN) throw invalid('token', `longer than ${MAX_TOKEN} characters`);
  const parts = token.split('.');
  if (parts.length !== 3)
    throw invalid('token', `not a compact JWS (expected 3 dot-separated parts, got ${parts.length})`);
  const header = decodeJson(parts[0]!, 'header');
  const claims = decodeJson(parts[1]!, 'payload');
  if (header.alg !== alg)
    throw invalid(
      'token',
      `alg ${JSON.stringify(header.alg)} does not match key ${key.name} (${key.type} verifies ${alg} only)`,
    );
  if (header.crit !== undefined) throw invalid('token', 'crit header parameters are not supported');
  if (typeof header.kid !== 'string') throw invalid('token', 'header has no kid');
  const v = versionOfKid(key, header.kid);
  if (!/^[A-Za-z0-9_-]+$/.test(parts[2]!)) throw invalid('token', 'signature is not base64url');
  const sig = Buffer.from(parts[2]!, 'base64url');
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
  const ok =
    key.type === 'ml-dsa'
      ? pqVerify(key, v, signed, sig, { prehashed: false, hash: '' })
      : nodeVerify(hash, signed, { key: v.publicKey!, dsaEncoding: 'ieee-p1363' }, sig);
  const result = (error?: string): JwtVerifyResult => ({
    valid: !error,
    ...(error ? { error } : {}),
    header,
    claims,
    version: v.version,
  });
  if (!ok) return { valid: false, error: 'signature does not verify', header: {}, claims: {}, version: v.version };
  const skew = o.leeway ?? 0;
  const num = (c: string) => (typeof claims[c] === 'number' ? (claims[c] as number) : undefined);
  if (claims.exp !== undefined && num('exp') === undefined) return result('exp is not a number');
  if (claims.nbf !== undefined && num('nbf') === undefined) return result('nbf is not a number');
  if (num('exp') !== undefined && o.now >= num('exp')! + skew) return result('token has expired (exp)');
  if (num('nbf') !== undefined && o.now < num('nbf')! - skew) return result('token is not valid yet (nbf)');
  if (o.iss !== undefined && claims.iss !== o.iss) return result('iss does not match');
  if (o.aud?.length) {
    const got = Array.isArray(claims.aud) ? claims.aud : claims.aud === undefined ? [] : [claims.aud];
    if (!got.some((a) => o.aud!.includes(a as string))) return result('aud does not match');
  }
  return result();
}

/** The version whose JWK has this kid; 400 naming why when none valid for verification does. */
function versionOfKid(key: TransitKey, kid: string): KeyVersion {
  for (const v of key.versions.values()) {
    if (!hasPublic(key, v) || versionJwk(key, v).kid !== kid) continue;
    if (v.version < key.minDecryptionVersion) {
      throw invalid(
        'token',
        `kid ${kid} is version ${v.version} of key ${key.name}, below min_decryption_version ${key.minDecryptionVersion}: no longer valid for verification`,
      );
    }
    return v;
  }
  throw invalid(
    'token',
    `kid ${kid.slice(0, 64)} is not a version of key ${key.name} valid for verification (unknown, or trimmed)`,
  );
}
