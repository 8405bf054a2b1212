/**
 * keyhold as an OIDC issuer (issue 29 part 4) against a real daemon: keys, roles, identity tokens for
 * a login's entity, verified with `jose` against the published JWKS and discovery document (and once
 * with node:crypto alone), rotation within and past verification_ttl, introspection, and Vault's
 * refusals.
 */
import { createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;
const ISSUER = 'https://keyhold.test:8200/v1/identity/oidc';
let login: { client_token: string; entity_id: string };

async function must(method: string, path: string, body?: unknown, status = 200, token?: string | null) {
  const r = await d.req(method, path, body, token === undefined ? {} : { token });
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}

async function jwks() {
  const r = await must('GET', 'identity/oidc/.well-known/keys', undefined, 200, null);
  return createLocalJWKSet(r.body);
}

async function approleLogin(): Promise<{ client_token: string; entity_id: string }> {
  const roleId = (await must('GET', 'auth/approle/role/app/role-id')).body.data.role_id;
  const secretId = (await must('POST', 'auth/approle/role/app/secret-id', {})).body.data.secret_id;
  return (await must('POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, 200, null)).body.auth;
}

beforeAll(async () => {
  d = await startDaemon({ dev: true });
  await must('POST', 'identity/oidc/config', { issuer: 'https://keyhold.test:8200' }, 204);
  await must('POST', 'sys/auth/approle', { type: 'approle' }, 204);
  await must(
    'POST',
    'sys/policies/acl/idtok',
    { policy: 'path "identity/oidc/token/*" { capabilities = ["read"] }' },
    204,
  );
  await must('POST', 'auth/approle/role/app', { token_policies: 'idtok', token_ttl: '1h' }, 204);
  login = await approleLogin();
}, 60_000);

afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe('identity tokens', () => {
  it('issues a token for the login entity that verifies against the published JWKS', async () => {
    await must(
      'POST',
      'identity/oidc/key/k1',
      { algorithm: 'ES256', allowed_client_ids: ['*'], verification_ttl: '2h', rotation_period: '1h' },
      204,
    );
    await must(
      'POST',
      'identity/oidc/role/r1',
      { key: 'k1', ttl: '30m', template: '{"who": {{identity.entity.name}}, "meta": {{identity.entity.metadata}}}' },
      204,
    );
    const role = (await must('GET', 'identity/oidc/role/r1')).body.data;
    expect(role).toMatchObject({ key: 'k1', ttl: 1800 });
    expect(role.client_id).toMatch(/^[A-Za-z0-9]{26}$/);
    expect((await must('GET', 'identity/oidc/key/k1')).body.data).toEqual({
      algorithm: 'ES256',
      allowed_client_ids: ['*'],
      rotation_period: 3600,
      verification_ttl: 7200,
    });

    const issued = (await must('GET', 'identity/oidc/token/r1', undefined, 200, login.client_token)).body.data;
    expect(issued).toMatchObject({ client_id: role.client_id, ttl: 1800 });
    const discovery = (await must('GET', 'identity/oidc/.well-known/openid-configuration', undefined, 200, null)).body;
    expect(discovery).toMatchObject({
      issuer: ISSUER,
      jwks_uri: `${ISSUER}/.well-known/keys`,
      response_types_supported: ['id_token'],
    });
    const { payload, protectedHeader } = await jwtVerify(issued.token, await jwks(), {
      issuer: discovery.issuer,
      audience: role.client_id,
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload.sub).toBe(login.entity_id);
    expect(payload.namespace).toBe('root');
    expect(payload.exp! - payload.iat!).toBe(1800);
    expect(typeof payload.who).toBe('string');
    expect(payload.meta).toEqual({});

    // The same signature checked with node:crypto alone (JWS ES256: r||s over header.payload).
    const [h, p, sig] = issued.token.split('.');
    const jwk = (await must('GET', 'identity/oidc/.well-known/keys', undefined, 200, null)).body.keys.find(
      (k: { kid: string }) => k.kid === protectedHeader.kid,
    );
    const ok = cryptoVerify(
      'sha256',
      Buffer.from(`${h}.${p}`),
      { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
      Buffer.from(sig!, 'base64url'),
    );
    expect(ok).toBe(true);
  });

  it('signs with every algorithm Vault offers', async () => {
    for (const alg of ['RS256', 'RS512', 'ES384', 'ES512', 'EdDSA']) {
      await must('POST', `identity/oidc/key/a-${alg}`, { algorithm: alg, allowed_client_ids: ['*'] }, 204);
      await must('POST', `identity/oidc/role/a-${alg}`, { key: `a-${alg}`, ttl: '10m' }, 204);
      const t = (await must('GET', `identity/oidc/token/a-${alg}`, undefined, 200, login.client_token)).body.data.token;
      const { protectedHeader } = await jwtVerify(t, await jwks(), { issuer: ISSUER });
      expect(protectedHeader.alg).toBe(alg);
    }
  });

  it('keeps a rotated-out key published for verification_ttl, and no longer', async () => {
    await must('POST', 'identity/oidc/key/k2', { algorithm: 'RS256', allowed_client_ids: ['*'] }, 204);
    await must('POST', 'identity/oidc/role/r2', { key: 'k2', ttl: '10m' }, 204);
    const before = (await must('GET', 'identity/oidc/token/r2', undefined, 200, login.client_token)).body.data.token;
    await must('POST', 'identity/oidc/key/k2/rotate', {}, 204);
    const after = (await must('GET', 'identity/oidc/token/r2', undefined, 200, login.client_token)).body.data.token;
    expect(decodeProtectedHeader(after).kid).not.toBe(decodeProtectedHeader(before).kid);
    await jwtVerify(before, await jwks(), { issuer: ISSUER });
    await jwtVerify(after, await jwks(), { issuer: ISSUER });
    // A rotation whose old key is published only one second more: the first token stops verifying.
    await must('POST', 'identity/oidc/key/k2/rotate', { verification_ttl: '1s' }, 204);
    await new Promise((r) => setTimeout(r, 1500));
    await jwtVerify(before, await jwks(), { issuer: ISSUER }); // retired by the first rotation (24h)
    await expect(jwtVerify(after, await jwks(), { issuer: ISSUER })).rejects.toThrow();
  });

  it('introspects: active, tampered, wrong audience', async () => {
    const role = (await must('GET', 'identity/oidc/role/r1')).body.data;
    const t = (await must('GET', 'identity/oidc/token/r1', undefined, 200, login.client_token)).body.data
      .token as string;
    expect((await must('POST', 'identity/oidc/introspect', { token: t, client_id: role.client_id })).body.data).toEqual(
      { active: true },
    );
    const [h, p, s] = t.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), sub: 'someone-else' })).toString('base64url')}.${s}`;
    expect((await must('POST', 'identity/oidc/introspect', { token: forged })).body.data.active).toBe(false);
    expect(
      (await must('POST', 'identity/oidc/introspect', { token: t, client_id: 'not-the-audience' })).body.data.active,
    ).toBe(false);
  });

  it("refuses as Vault: no entity, a key that does not allow the role's client, a referenced key, reserved claims", async () => {
    const noEntity = await d.req('GET', 'identity/oidc/token/r1');
    expect(noEntity.status).toBe(400);
    expect(noEntity.body.errors.join()).toContain("no entity associated with the request's token");
    await must('POST', 'identity/oidc/key/strict', { allowed_client_ids: ['someone'] }, 204);
    await must('POST', 'identity/oidc/role/strict', { key: 'strict', ttl: '10m' }, 204);
    const refused = await d.req('GET', 'identity/oidc/token/strict', undefined, { token: login.client_token });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.join()).toContain(
      'does not list the client ID of the role "strict" as an allowed client ID',
    );
    const del = await d.req('DELETE', 'identity/oidc/key/strict');
    expect(del.status).toBe(400);
    expect(del.text).toContain('currently referenced by these roles: strict');
    const reserved = await d.req('POST', 'identity/oidc/role/bad', { key: 'k1', template: '{"sub": "me"}' });
    expect(reserved.status).toBe(400);
    expect(reserved.text).toContain('template');
    const badAlg = await d.req('POST', 'identity/oidc/key/bad', { algorithm: 'HS256' });
    expect(badAlg.status).toBe(400);
    expect(badAlg.text).toContain('algorithm');
    const longTtl = await d.req('POST', 'identity/oidc/role/long', { key: 'k1', ttl: '3h' });
    expect(longTtl.status).toBe(400);
    expect(longTtl.text).toContain('verification_ttl');
    expect((await must('LIST', 'identity/oidc/role')).body.data.keys).toEqual(
      expect.arrayContaining(['r1', 'r2', 'strict']),
    );
  });
});
