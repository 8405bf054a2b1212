/**
 * JWT validation with Vault's rules and messages (hashicorp/cap jwt/jwt.go Validate, vault-plugin-auth-jwt
 * path_login.go; identity-wire.md section 3.4). Signatures are checked by `jose` against an allow-list of
 * algorithms: `alg: none` and HS* never pass, whatever key a token points at (so an HS256 token "signed"
 * with the provider's public key is refused before any key is used).
 */
import type { KeyObject } from 'node:crypto';
import { compactVerify, decodeProtectedHeader, errors as joseErrors } from 'jose';
import { invalid } from '../../framework/errors.js';
import type { KeyResolver } from './key-sources.js';

/** Every algorithm Vault's JWT method accepts (cap jwt/algs.go). */
export const SUPPORTED_ALGS = [
  'RS256',
  'RS384',
  'RS512',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
  'EdDSA',
] as const;

/** Tokens above this size are refused before parsing (a JWT is a few KB; 64 KiB leaves room for big group lists). */
export const MAX_JWT_BYTES = 64 * 1024;

const REGISTERED = ['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti'];

/** What a validation needs. */
export interface ValidationSpec {
  keys: KeyObject[] | KeyResolver;
  algorithms: readonly string[];
  boundIssuer?: string;
  /** Role's bound_audiences ([] = none bound: then a token carrying `aud` is refused). */
  audiences: string[];
  boundSubject?: string;
  /** Seconds; 0 = default (60 / 150 / 150), -1 = none. */
  clockSkewLeeway: number;
  expirationLeeway: number;
  notBeforeLeeway: number;
  /** Unix seconds. */
  now: number;
  /** OIDC ID tokens: the nonce sent in the authorization request. */
  nonce?: string;
}

function fail(reason: string): Error {
  return invalid(`error validating token: ${reason}`);
}

function leeway(v: number, dflt: number): number {
  return v === 0 ? dflt : v < 0 ? 0 : v;
}

/** Verify `jwt` and its registered claims; returns the claims. Throws 400 with Vault's messages. */
export async function validateJwt(jwt: string, spec: ValidationSpec): Promise<Record<string, unknown>> {
  if (jwt.length > MAX_JWT_BYTES) throw fail(`token is larger than ${MAX_JWT_BYTES} bytes`);
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(jwt))
    throw fail('malformed token: expected three base64url parts separated by "."');
  let alg: string | undefined;
  try {
    alg = decodeProtectedHeader(jwt).alg;
  } catch {
    throw fail('malformed token: the header is not base64url-encoded JSON');
  }
  if (!alg || !spec.algorithms.includes(alg))
    throw fail('invalid algorithm (alg) header parameter: token signed with unexpected algorithm');
  let payload: Uint8Array | undefined;
  const opts = { algorithms: [...spec.algorithms] };
  if (Array.isArray(spec.keys)) {
    for (const key of spec.keys) {
      try {
        payload = (await compactVerify(jwt, key, opts)).payload;
        break;
      } catch {
        /* try the next key */
      }
    }
    if (!payload)
      throw fail('error verifying token signature: no known key successfully validated the token signature');
  } else {
    try {
      payload = (await compactVerify(jwt, spec.keys as never, opts)).payload;
    } catch (e) {
      if (e instanceof joseErrors.JWKSNoMatchingKey || e instanceof joseErrors.JWSSignatureVerificationFailed)
        throw fail('error verifying token signature: no known key successfully validated the token signature');
      if (
        e instanceof joseErrors.JWKSTimeout ||
        (e as Error).name === 'TypeError' ||
        (e as NodeJS.ErrnoException).code === 'ECONNREFUSED'
      ) {
        throw fail(`error verifying token signature: failed to fetch keys: ${(e as Error).message}`);
      }
      throw fail(`error verifying token signature: ${(e as Error).message}`);
    }
  }
  let claims: Record<string, unknown>;
  try {
    const v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
    claims = v as Record<string, unknown>;
  } catch {
    throw fail('malformed token: the payload is not a JSON object');
  }
  for (const k of Object.keys(claims)) {
    const r = REGISTERED.find((x) => x === k.toLowerCase());
    if (r && r !== k)
      throw fail(
        `ambiguous claim: key ${JSON.stringify(k)} collides with registered claim ${JSON.stringify(r)} under case folding`,
      );
  }
  if (spec.boundIssuer && claims.iss !== spec.boundIssuer) throw fail('invalid issuer (iss) claim');
  if (spec.boundSubject && claims.sub !== spec.boundSubject) throw fail('invalid subject (sub) claim');
  const aud = claims.aud === undefined ? [] : Array.isArray(claims.aud) ? claims.aud.map(String) : [String(claims.aud)];
  if (spec.audiences.length) {
    if (!aud.some((a) => spec.audiences.includes(a)))
      throw fail('invalid audience (aud) claim: audience claim does not match any expected audience');
  }
  const num = (k: string): number | undefined => {
    const v = claims[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw fail(`malformed token: claim ${JSON.stringify(k)} is not a number`);
    return v;
  };
  const iat = num('iat');
  let nbf = num('nbf');
  let exp = num('exp');
  if (iat === undefined && nbf === undefined && exp === undefined)
    throw fail('no issued at (iat), not before (nbf), or expiration time (exp) claims in token');
  const skew = leeway(spec.clockSkewLeeway, 60);
  const expLeeway = leeway(spec.expirationLeeway, 150);
  const nbfLeeway = leeway(spec.notBeforeLeeway, 150);
  // Missing claims are synthesised as hashicorp/cap jwt.go Validate does: exp from the later of iat
  // and nbf plus the expiration leeway; nbf from iat, else from exp minus the not-before leeway.
  if (exp === undefined) exp = Math.max(iat ?? 0, nbf ?? 0) + expLeeway;
  if (nbf === undefined) nbf = iat ?? exp - nbfLeeway;
  if (nbf !== undefined && nbf > spec.now + skew) throw fail('invalid not before (nbf) claim: token not yet valid');
  if (exp !== undefined && exp < spec.now - skew) throw fail('invalid expiration time (exp) claim: token is expired');
  if (iat !== undefined && iat > spec.now + skew)
    throw fail('invalid issued at (iat) claim: token issued in the future');
  if (spec.nonce !== undefined && claims.nonce !== spec.nonce) throw fail('invalid ID token nonce');
  // Vault 1.16.3+: a token carrying an audience needs bound_audiences on the role.
  if (!spec.audiences.length && aud.length && spec.nonce === undefined)
    throw invalid('audience claim found in JWT but no audiences bound to the role');
  return claims;
}
