/**
 * The JWT validator (src/engines/jwt/validator.ts) against tokens signed by an independent
 * implementation (@noble/curves for ES256 and EdDSA; node:crypto for RS256), Vault's time rules with
 * leeways, and the refusals: alg none, HS256 keyed with the public key, tampering, case collisions.
 */
import { createHmac, createPublicKey, createSign, generateKeyPairSync } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { SUPPORTED_ALGS, validateJwt, type ValidationSpec } from '../../../src/engines/jwt/validator.js';
import { checkBoundClaims, getClaim, globMatch } from '../../../src/engines/jwt/claims.js';

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const NOW = 1_800_000_000;

function spec(keys: ValidationSpec['keys'], over: Partial<ValidationSpec> = {}): ValidationSpec {
  return {
    keys,
    algorithms: SUPPORTED_ALGS,
    audiences: ['aud-1'],
    clockSkewLeeway: 0,
    expirationLeeway: 0,
    notBeforeLeeway: 0,
    now: NOW,
    ...over,
  };
}
const claims = (over: Record<string, unknown> = {}) => ({
  iss: 'iss-1',
  sub: 'sub-1',
  aud: 'aud-1',
  iat: NOW - 10,
  exp: NOW + 300,
  ...over,
});

describe('signatures checked against independent signers', () => {
  it('accepts ES256 signed by @noble/curves (raw r||s, as JWS wants) and refuses it tampered', async () => {
    const sk = p256.utils.randomSecretKey();
    const pub = p256.getPublicKey(sk, false);
    const key = createPublicKey({
      key: {
        kty: 'EC',
        crv: 'P-256',
        x: Buffer.from(pub.subarray(1, 33)).toString('base64url'),
        y: Buffer.from(pub.subarray(33)).toString('base64url'),
      },
      format: 'jwk',
    });
    const head = `${b64({ alg: 'ES256', typ: 'JWT' })}.${b64(claims())}`;
    const sig = p256.sign(new TextEncoder().encode(head), sk);
    const jwt = `${head}.${Buffer.from(sig).toString('base64url')}`;
    expect((await validateJwt(jwt, spec([key]))).sub).toBe('sub-1');
    const forged = `${b64({ alg: 'ES256', typ: 'JWT' })}.${b64(claims({ sub: 'admin' }))}.${Buffer.from(sig).toString('base64url')}`;
    await expect(validateJwt(forged, spec([key]))).rejects.toThrow(
      'error validating token: error verifying token signature: no known key successfully validated the token signature',
    );
  });

  it('accepts EdDSA signed by @noble/curves ed25519', async () => {
    const sk = ed25519.utils.randomSecretKey();
    const key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(ed25519.getPublicKey(sk)).toString('base64url') },
      format: 'jwk',
    });
    const head = `${b64({ alg: 'EdDSA' })}.${b64(claims())}`;
    const jwt = `${head}.${Buffer.from(ed25519.sign(new TextEncoder().encode(head), sk)).toString('base64url')}`;
    expect((await validateJwt(jwt, spec([key]))).iss).toBe('iss-1');
  });

  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rs256 = (c: Record<string, unknown>, header: Record<string, unknown> = { alg: 'RS256' }) => {
    const head = `${b64(header)}.${b64(c)}`;
    return `${head}.${createSign('RSA-SHA256').update(head).sign(rsa.privateKey).toString('base64url')}`;
  };

  it('refuses alg none, and HS256 keyed with the PEM of the public key, before using any key', async () => {
    await expect(validateJwt(`${b64({ alg: 'none' })}.${b64(claims())}.`, spec([rsa.publicKey]))).rejects.toThrow(
      'invalid algorithm (alg) header parameter: token signed with unexpected algorithm',
    );
    const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const head = `${b64({ alg: 'HS256' })}.${b64(claims())}`;
    const hs = `${head}.${createHmac('sha256', pem).update(head).digest('base64url')}`;
    await expect(validateJwt(hs, spec([rsa.publicKey]))).rejects.toThrow('token signed with unexpected algorithm');
    // jwt_supported_algs narrows the list: RS256 refused when only ES256 is allowed.
    await expect(validateJwt(rs256(claims()), spec([rsa.publicKey], { algorithms: ['ES256'] }))).rejects.toThrow(
      'unexpected algorithm',
    );
  });

  it('applies the time rules with the 60 s default skew leeway, and -1 for none', async () => {
    expect(await validateJwt(rs256(claims({ exp: NOW - 30 })), spec([rsa.publicKey]))).toBeTruthy();
    await expect(validateJwt(rs256(claims({ exp: NOW - 61 })), spec([rsa.publicKey]))).rejects.toThrow(
      'invalid expiration time (exp) claim: token is expired',
    );
    await expect(
      validateJwt(rs256(claims({ exp: NOW - 30 })), spec([rsa.publicKey], { clockSkewLeeway: -1 })),
    ).rejects.toThrow('token is expired');
    await expect(validateJwt(rs256(claims({ nbf: NOW + 61 })), spec([rsa.publicKey]))).rejects.toThrow(
      'invalid not before (nbf) claim: token not yet valid',
    );
    // Without nbf, nbf is taken from iat (cap): a future iat fails the nbf check first.
    await expect(validateJwt(rs256(claims({ iat: NOW + 61, exp: NOW + 600 })), spec([rsa.publicKey]))).rejects.toThrow(
      'invalid not before (nbf) claim: token not yet valid',
    );
    await expect(
      validateJwt(rs256(claims({ nbf: NOW, iat: NOW + 61, exp: NOW + 600 })), spec([rsa.publicKey])),
    ).rejects.toThrow('invalid issued at (iat) claim: token issued in the future');
    await expect(validateJwt(rs256({ sub: 'x', aud: 'aud-1' }), spec([rsa.publicKey]))).rejects.toThrow(
      'no issued at (iat), not before (nbf), or expiration time (exp) claims in token',
    );
    // No exp: synthesised as iat + 150 s expiration leeway.
    await expect(validateJwt(rs256({ aud: 'aud-1', iat: NOW - 300 }), spec([rsa.publicKey]))).rejects.toThrow(
      'token is expired',
    );
    expect(await validateJwt(rs256({ aud: 'aud-1', iat: NOW - 100 }), spec([rsa.publicKey]))).toBeTruthy();
  });

  it('checks issuer, subject and audiences, and refuses registered-claim case collisions', async () => {
    await expect(validateJwt(rs256(claims()), spec([rsa.publicKey], { boundIssuer: 'other' }))).rejects.toThrow(
      'invalid issuer (iss) claim',
    );
    await expect(validateJwt(rs256(claims()), spec([rsa.publicKey], { boundSubject: 'other' }))).rejects.toThrow(
      'invalid subject (sub) claim',
    );
    await expect(validateJwt(rs256(claims({ aud: ['x', 'y'] })), spec([rsa.publicKey]))).rejects.toThrow(
      'audience claim does not match any expected audience',
    );
    expect(await validateJwt(rs256(claims({ aud: ['x', 'aud-1'] })), spec([rsa.publicKey]))).toBeTruthy();
    await expect(validateJwt(rs256(claims()), spec([rsa.publicKey], { audiences: [] }))).rejects.toThrow(
      'audience claim found in JWT but no audiences bound to the role',
    );
    await expect(validateJwt(rs256(claims({ ISS: 'evil' })), spec([rsa.publicKey]))).rejects.toThrow(
      'ambiguous claim: key "ISS" collides with registered claim "iss" under case folding',
    );
  });

  it('refuses malformed and oversized tokens without parsing them', async () => {
    await expect(validateJwt('a.b', spec([rsa.publicKey]))).rejects.toThrow('malformed token');
    await expect(validateJwt(`${b64('not json')}.${b64(claims())}.x`, spec([rsa.publicKey]))).rejects.toThrow(
      'malformed token',
    );
    await expect(validateJwt('a'.repeat(70_000) + '.b.c', spec([rsa.publicKey]))).rejects.toThrow(
      'token is larger than 65536 bytes',
    );
  });
});

describe('claims', () => {
  it('glob matches across "/" and ":" as Vault does', () => {
    expect(globMatch('repo:octo-org/*:ref:refs/heads/*', 'repo:octo-org/app:ref:refs/heads/main')).toBe(true);
    expect(globMatch('repo:octo-org/app:ref:refs/heads/main', 'repo:octo-org/app:ref:refs/heads/mainx')).toBe(false);
    expect(globMatch('a.b', 'axb')).toBe(false);
  });
  it('bound claims: lists match any, types compare strictly, JSON pointers reach nested claims', () => {
    const c = { groups: ['dev', 'ops'], n: 42, nested: { team: 'core' } };
    expect(() => checkBoundClaims(c, { groups: ['ops'], n: 42, '/nested/team': 'core' }, false)).not.toThrow();
    expect(() => checkBoundClaims(c, { n: '42' }, false)).toThrow(
      'claim "n" does not match any associated bound claim values',
    );
    expect(() => checkBoundClaims(c, { missing: 'x' }, false)).toThrow('claim "missing" is missing');
    expect(getClaim(c, '/nested/team')).toBe('core');
  });
});
