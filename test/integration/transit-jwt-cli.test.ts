/**
 * The CLI half of transit JWT (issue 17 part 2) against the real daemon: `transit jwt sign|verify` and
 * `transit keys export public-key --format jwk|jwks|pem`, checked with jose. The routes themselves:
 * test/unit/routes/transit-jwt.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPublicKey } from 'node:crypto';
import { createLocalJWKSet, calculateJwkThumbprint, jwtVerify, type JWK } from 'jose';
import { cleanup, startDaemon, type Answer, type Daemon } from '../support/daemon.js';

let d: Daemon;
beforeAll(async () => {
  d = await startDaemon({ dev: true });
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

function ok(r: Answer, status = 200): Answer {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}
const post = (path: string, body: unknown) => d.req('POST', `transit/${path}`, body);
const jwks = async (name: string) => d.req('GET', `transit/jwks/${name}`);

async function verifyWithJose(name: string, token: string, opts: { audience?: string; issuer?: string } = {}) {
  const set = ok(await jwks(name)).body as { keys: JWK[] };
  return jwtVerify(token, createLocalJWKSet(set), opts);
}

describe('CLI: transit jwt sign|verify and keys export public-key --format jwk|jwks|pem', () => {
  test('sign prints a token jose verifies; verify reads it from stdin and exits 0/1', async () => {
    ok(await post('keys/cli-iss', { type: 'ecdsa-p256' }));
    const s = await d.cli([
      'transit',
      'jwt',
      'sign',
      'cli-iss',
      '--claims',
      '{"sub":"cli"}',
      '--ttl',
      '5m',
      '--aud',
      'ci',
      '--field',
      'token',
    ]);
    expect(s.exitCode, s.stderr).toBe(0);
    const token = s.stdout.trim();
    expect((await verifyWithJose('cli-iss', token, { audience: 'ci' })).payload.sub).toBe('cli');
    const v = await d.cli(['transit', 'jwt', 'verify', 'cli-iss', '--aud', 'ci'], { input: token });
    expect(v.exitCode, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ sub: 'cli', aud: 'ci' });
    const bad = await d.cli(['transit', 'jwt', 'verify', 'cli-iss', '--aud', 'other'], { input: token });
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toMatch(/Verification failure: aud does not match/);
    expect(bad.stdout).toBe('');
    const notObject = await d.cli(['transit', 'jwt', 'sign', 'cli-iss', '--claims', '[1]']);
    expect(notObject.exitCode).toBe(2);
    expect(notObject.stderr).toMatch(/claims: expected an object/);
  });

  test('export public-key as jwk, jwks and pem agrees with the JWKS endpoint and the read key', async () => {
    ok(await post('keys/cli-exp', { type: 'ed25519' }));
    ok(await post('keys/cli-exp/rotate', {}));
    const set = ok(await jwks('cli-exp')).body as { keys: JWK[] };
    const jwksOut = await d.cli(['transit', 'keys', 'export', 'public-key', 'cli-exp', '--format', 'jwks']);
    expect(jwksOut.exitCode, jwksOut.stderr).toBe(0);
    expect(JSON.parse(jwksOut.stdout)).toEqual(set);
    const jwk1 = await d.cli(['transit', 'keys', 'export', 'public-key', 'cli-exp', '1', '--format', 'jwk']);
    expect(JSON.parse(jwk1.stdout)).toEqual(set.keys[0]);
    const latest = await d.cli(['transit', 'keys', 'export', 'public-key', 'cli-exp', '--format', 'jwk']);
    expect(JSON.parse(latest.stdout)).toEqual(set.keys[1]);
    const pem = await d.cli(['transit', 'keys', 'export', 'public-key', 'cli-exp', '2', '--format', 'pem']);
    expect(pem.stdout).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(await calculateJwkThumbprint(createPublicKeyJwk(pem.stdout))).toBe(set.keys[1]!.kid);
    const wrongKind = await d.cli(['transit', 'keys', 'export', 'signing-key', 'cli-exp', '--format', 'pem']);
    expect(wrongKind.exitCode).toBe(1);
    expect(wrongKind.stderr).toMatch(/--format pem applies to public-key exports only/);
    const wrongCommand = await d.cli(['transit', 'keys', 'read', 'cli-exp', '--format', 'jwks']);
    expect(wrongCommand.exitCode).toBe(1);
    expect(wrongCommand.stderr).toMatch(/--format jwks does not apply to this command/);
  });
});

function createPublicKeyJwk(pem: string): JWK {
  return createPublicKey(pem).export({ format: 'jwk' }) as JWK;
}
