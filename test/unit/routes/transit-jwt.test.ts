/**
 * JWKS and JWT from transit (issue 17 part 2) through the real router and core (test/support/harness.ts,
 * the CLI half in test/integration/transit-jwt-cli.test.ts), checked with an independent
 * JOSE implementation (`jose`): for every signing key type, keyhold's JWTs verify with jose through
 * the key's JWKS endpoint, across a rotation and a min_decryption_version raise and a trim; the JWK
 * Set has one JWK per version valid for verification with RFC 7638 kids; public_jwks serves it
 * without a token; keyhold's verify accepts jose-signed tokens made with the exported key and
 * refuses bad input with clear errors.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPrivateKey } from 'node:crypto';
import { createLocalJWKSet, calculateJwkThumbprint, decodeProtectedHeader, jwtVerify, SignJWT, type JWK } from 'jose';
import { cleanup, startHarness, type Answer, type Harness } from '../../support/harness.js';

let d: Harness;
beforeAll(async () => {
  d = await startHarness();
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

function ok(r: Answer, status = 200): Answer {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}
const post = (path: string, body: unknown, token?: string | null) =>
  d.req('POST', `transit/${path}`, body, token !== undefined ? { token } : {});
const err = (r: Answer) => (r.body?.errors ?? []).join('; ');
const jwks = async (name: string, token?: string | null) =>
  d.req('GET', `transit/jwks/${name}`, undefined, token !== undefined ? { token } : {});

const TYPES = [
  ['ed25519', 'EdDSA'],
  ['ecdsa-p256', 'ES256'],
  ['ecdsa-p384', 'ES384'],
  ['ecdsa-p521', 'ES512'],
  ['rsa-2048', 'RS256'],
  ['rsa-3072', 'RS256'],
  ['rsa-4096', 'RS256'],
] as const;

async function verifyWithJose(name: string, token: string, opts: { audience?: string; issuer?: string } = {}) {
  const set = ok(await jwks(name)).body as { keys: JWK[] };
  return jwtVerify(token, createLocalJWKSet(set), opts);
}

describe('every signing key type, across rotation and trim, verified by jose through the JWKS', () => {
  test.each(TYPES)('%s signs %s JWTs that jose verifies; old versions drop out of the JWKS', async (type, alg) => {
    const name = `jwt-${type}`;
    ok(await post(`keys/${name}`, { type }), 200);
    const s1 = ok(
      await post(`jwt/sign/${name}`, {
        claims: { sub: 'svc-1', scope: ['a', 'b'] },
        ttl: '10m',
        iss: 'https://keyhold.test',
        aud: 'ci',
      }),
    ).body.data;
    expect(s1.key_version).toBe(1);
    const h1 = decodeProtectedHeader(s1.token);
    expect(h1).toMatchObject({ alg, typ: 'JWT', kid: s1.kid });
    const v1 = await verifyWithJose(name, s1.token, { audience: 'ci', issuer: 'https://keyhold.test' });
    expect(v1.payload.sub).toBe('svc-1');
    expect(v1.payload.exp! - v1.payload.iat!).toBe(600);
    expect(Math.abs(v1.payload.iat! - Date.now() / 1000)).toBeLessThan(60);

    // JWKS: alg and use per JWK, kid = RFC 7638 thumbprint computed by jose.
    let set = ok(await jwks(name)).body as { keys: JWK[] };
    expect(ok(await jwks(name)).headers['content-type']).toMatch(/application\/json/);
    expect(set.keys).toHaveLength(1);
    expect(set.keys[0]).toMatchObject({ alg, use: 'sig', kid: s1.kid });
    expect(await calculateJwkThumbprint(set.keys[0]!, 'sha256')).toBe(s1.kid);
    expect(set.keys[0]!.d).toBeUndefined();

    // Rotate: new tokens carry version 2's kid; both verify; the kid of version 1 is stable.
    ok(await post(`keys/${name}/rotate`, {}));
    const s2 = ok(await post(`jwt/sign/${name}`, { claims: { sub: 'svc-2' } })).body.data;
    expect(s2.key_version).toBe(2);
    expect(s2.kid).not.toBe(s1.kid);
    set = ok(await jwks(name)).body;
    expect(set.keys.map((k) => k.kid)).toEqual([s1.kid, s2.kid]);
    expect((await verifyWithJose(name, s1.token, { audience: 'ci' })).payload.sub).toBe('svc-1');
    expect((await verifyWithJose(name, s2.token)).payload.sub).toBe('svc-2');
    expect(ok(await post(`jwt/verify/${name}`, { token: s1.token, aud: 'ci' })).body.data).toMatchObject({
      valid: true,
      key_version: 1,
      claims: { sub: 'svc-1' },
    });

    // min_decryption_version 2: version 1 leaves the JWKS; jose and keyhold refuse its tokens.
    ok(await post(`keys/${name}/config`, { min_decryption_version: 2, min_encryption_version: 2 }));
    set = ok(await jwks(name)).body;
    expect(set.keys.map((k) => k.kid)).toEqual([s2.kid]);
    await expect(verifyWithJose(name, s1.token)).rejects.toThrow();
    const r1 = await post(`jwt/verify/${name}`, { token: s1.token });
    expect(r1.status).toBe(400);
    expect(err(r1)).toMatch(/below min_decryption_version 2: no longer valid for verification/);

    // Trim version 1 away: its kid is unknown now.
    ok(await post(`keys/${name}/trim`, { min_available_version: 2 }));
    const r2 = await post(`jwt/verify/${name}`, { token: s1.token });
    expect(r2.status).toBe(400);
    expect(err(r2)).toMatch(/is not a version of key .* valid for verification \(unknown, or trimmed\)/);
    expect((await verifyWithJose(name, s2.token)).payload.sub).toBe('svc-2');
  });
});

describe('batch_input', () => {
  test('items sign independently (jose verifies each); a malformed item carries its own error', async () => {
    ok(await post('keys/jwt-batch', { type: 'ecdsa-p384' }));
    const r = ok(
      await post('jwt/sign/jwt-batch', {
        batch_input: [
          { claims: { sub: 'a' } },
          { claims: 'x' },
          { claims: { sub: 'c' }, aud: ['x', 'y'], ttl: 30 },
          { claims: { exp: 5 } },
        ],
      }),
    ).body.data.batch_results;
    expect(r).toHaveLength(4);
    expect((await verifyWithJose('jwt-batch', r[0].token)).payload.sub).toBe('a');
    expect(r[1]).toEqual({ error: 'batch_input[1].claims: expected an object' });
    const c = await verifyWithJose('jwt-batch', r[2].token, { audience: 'y' });
    expect(c.payload.exp! - c.payload.iat!).toBe(30);
    expect(r[3].error).toMatch(/^claims: exp is set by keyhold/);
  });
});

describe('keyhold verify against tokens it did not make', () => {
  test('a jose-signed ES256 token with the exported key and kid verifies; tampering and expiry do not', async () => {
    ok(await post('keys/jwt-x', { type: 'ecdsa-p256', exportable: true }));
    const pem = ok(await d.req('GET', 'transit/export/signing-key/jwt-x/1')).body.data.keys['1'];
    const kid = ok(await post('jwt/sign/jwt-x', { claims: {} })).body.data.kid;
    const key = createPrivateKey(pem);
    const now = Math.floor(Date.now() / 1000);
    const theirs = await new SignJWT({ sub: 'from-jose' })
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(key);
    expect(ok(await post('jwt/verify/jwt-x', { token: theirs })).body.data).toMatchObject({
      valid: true,
      claims: { sub: 'from-jose' },
    });
    const [h, , s] = theirs.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'admin', exp: now + 60 })).toString('base64url')}.${s}`;
    expect(ok(await post('jwt/verify/jwt-x', { token: forged })).body.data).toEqual({
      valid: false,
      key_version: 1,
      error: 'signature does not verify',
    });
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuedAt(now - 100)
      .setExpirationTime(now - 50)
      .sign(key);
    expect(ok(await post('jwt/verify/jwt-x', { token: expired })).body.data).toMatchObject({
      valid: false,
      error: 'token has expired (exp)',
    });
    expect(ok(await post('jwt/verify/jwt-x', { token: theirs, aud: 'other' })).body.data).toMatchObject({
      valid: false,
      error: 'aud does not match',
    });
  });

  test('bad input: claims not an object, alg mismatch, reserved claims, foreign kid, malformed tokens, non-signing keys', async () => {
    ok(await post('keys/jwt-bad', { type: 'ed25519' }));
    ok(await post('keys/jwt-aes', {}));
    const cases: [string, unknown, RegExp][] = [
      ['jwt/sign/jwt-bad', { claims: 'sub=me' }, /^claims: expected an object/],
      ['jwt/sign/jwt-bad', { claims: [1, 2] }, /^claims: expected an object/],
      ['jwt/sign/jwt-bad', {}, /^claims or batch_input: one of these fields is required/],
      ['jwt/sign/jwt-bad', { batch_input: [] }, /^batch_input: is empty/],
      [
        'jwt/sign/jwt-bad',
        { claims: {}, header: { alg: 'RS256' } },
        /^header: alg "RS256" does not match key type ed25519, which signs EdDSA/,
      ],
      ['jwt/sign/jwt-bad', { claims: { exp: 1 } }, /^claims: exp is set by keyhold; use ttl/],
      ['jwt/sign/jwt-bad', { claims: {}, ttl: '-5s' }, /ttl/],
      ['jwt/sign/jwt-aes', { claims: {} }, /key type aes256-gcm96 cannot sign JWTs/],
      ['jwt/sign/jwt-missing', { claims: {} }, /signing key not found: jwt-missing/],
      ['jwt/verify/jwt-bad', { token: 'abc' }, /^token: not a compact JWS/],
      ['jwt/verify/jwt-bad', { token: 'e30.e30.AAAA' }, /^token: alg undefined does not match key jwt-bad/],
      [
        'jwt/verify/jwt-bad',
        { token: `${Buffer.from('{"alg":"EdDSA","kid":"nope"}').toString('base64url')}.e30.AAAA` },
        /^token: kid nope is not a version of key jwt-bad/,
      ],
      ['jwt/verify/jwt-bad', { token: '!!!.e30.AAAA' }, /^token: header is not base64url/],
      ['jwt/verify/jwt-bad', {}, /^token: is required/],
    ];
    for (const [path, body, re] of cases) {
      const r = await post(path, body);
      expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(err(r), `${path} ${JSON.stringify(body)}`).toMatch(re);
    }
    // A token signed by another key's version is refused by kid, not "valid: false".
    ok(await post('keys/jwt-other', { type: 'ed25519' }));
    const other = ok(await post('jwt/sign/jwt-other', { claims: {} })).body.data.token;
    expect(err(await post('jwt/verify/jwt-bad', { token: other }))).toMatch(/is not a version of key jwt-bad/);
    expect((await jwks('jwt-aes')).status).toBe(400);
    expect((await jwks('jwt-missing')).status).toBe(404);
  });
});

describe('public_jwks: the JWKS without a token, and only that', () => {
  test('off by default (403 without a token, same as a missing key); on, served to anyone; other routes still need a token', async () => {
    ok(await post('keys/jwt-pub', { type: 'ecdsa-p256' }));
    expect((await jwks('jwt-pub', null)).status).toBe(403);
    expect((await jwks('no-such-key', null)).status).toBe(403);
    expect((await jwks('..', null)).status).toBe(403);
    expect(ok(await d.req('GET', 'transit/keys/jwt-pub')).body.data.public_jwks).toBe(false);
    ok(await post('keys/jwt-pub/config', { public_jwks: true }));
    expect(ok(await d.req('GET', 'transit/keys/jwt-pub')).body.data.public_jwks).toBe(true);
    const anon = ok(await jwks('jwt-pub', null)).body as { keys: JWK[] };
    expect(anon.keys).toHaveLength(1);
    // A relying party with nothing but the URL verifies keyhold's token.
    const token = ok(await post('jwt/sign/jwt-pub', { claims: { sub: 'rp' } })).body.data.token;
    const res = await fetchJwks(`transit/jwks/jwt-pub`);
    expect((await jwtVerify(token, createLocalJWKSet(res))).payload.sub).toBe('rp');
    // Everything else on the key still needs a token.
    expect((await d.req('GET', 'transit/keys/jwt-pub', undefined, { token: null })).status).toBe(403);
    expect((await post('jwt/sign/jwt-pub', { claims: {} }, null)).status).toBe(403);
    expect((await post('jwt/verify/jwt-pub', { token }, null)).status).toBe(403);
    // Turned off again: anonymous callers are refused again.
    ok(await post('keys/jwt-pub/config', { public_jwks: false }));
    expect((await jwks('jwt-pub', null)).status).toBe(403);
    const refused = await post('keys/jwt-aes/config', { public_jwks: true });
    expect(refused.status).toBe(400);
    expect(err(refused)).toMatch(/^public_jwks: key type aes256-gcm96 has no public keys to publish/);
  });
});

/** GET without any token header, as a relying party would. */
async function fetchJwks(path: string): Promise<{ keys: JWK[] }> {
  const r = await d.req('GET', path, undefined, { token: null });
  expect(r.status).toBe(200);
  return r.body;
}
