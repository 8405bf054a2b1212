/**
 * External groups filled by JWT logins (Vault's group aliases): the role's groups_claim names the
 * groups; a login joins the entity to the external groups aliased with those names on that mount and
 * leaves the ones it no longer reports, and the groups' policies follow.
 */
import { createSign, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startHarness, type Harness } from '../../support/harness.js';

let d: Harness;
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

async function must(method: string, path: string, body?: unknown, status = 204) {
  const r = await d.req(method, path, body);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}

function jwt(claims: Record<string, unknown>): string {
  const now = Math.floor(Date.now() / 1000);
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ iss: 'test-issuer', iat: now, nbf: now, exp: now + 600, ...claims })}`;
  return `${head}.${createSign('RSA-SHA256').update(head).sign(privateKey).toString('base64url')}`;
}

async function login(groups: string[]) {
  const r = await d.req(
    'POST',
    'auth/jwt/login',
    { role: 'people', jwt: jwt({ sub: 'alice', groups }) },
    { token: null },
  );
  expect(r.status, r.text).toBe(200);
  return r.body.auth as { client_token: string; entity_id: string; policies: string[]; identity_policies?: string[] };
}

beforeAll(async () => {
  d = await startHarness();
  await must('POST', 'sys/auth/jwt', { type: 'jwt' });
  await must('POST', 'auth/jwt/config', {
    jwt_validation_pubkeys: [publicKey.export({ type: 'spki', format: 'pem' })],
    bound_issuer: 'test-issuer',
  });
  await must('POST', 'auth/jwt/role/people', {
    role_type: 'jwt',
    user_claim: 'sub',
    groups_claim: 'groups',
    bound_claims: { sub: 'alice' },
    token_policies: 'default',
  });
  await must('PUT', 'sys/policies/acl/app-read', { policy: 'path "secret/data/app" { capabilities = ["read"] }' });
  await must('POST', 'secret/data/app', { data: { k: 'v' } }, 200);
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe('external groups from a JWT groups claim', () => {
  it('joins and leaves the aliased external group at each login; its policies follow', async () => {
    const accessor = (await must('GET', 'sys/auth', undefined, 200)).body.data['jwt/'].accessor;
    const gid = (await must('POST', 'identity/group', { name: 'devs', type: 'external', policies: 'app-read' }, 200))
      .body.data.id;
    await must(
      'POST',
      'identity/group-alias',
      { name: 'developers', mount_accessor: accessor, canonical_id: gid },
      200,
    );

    const first = await login(['developers', 'sales']);
    expect(first.identity_policies).toEqual(['app-read']);
    expect(first.policies).toEqual(['app-read', 'default']);
    expect((await must('GET', `identity/group/id/${gid}`, undefined, 200)).body.data.member_entity_ids).toEqual([
      first.entity_id,
    ]);
    expect((await d.req('GET', 'secret/data/app', undefined, { token: first.client_token })).status).toBe(200);
    const lookup = await must(
      'POST',
      'identity/lookup/group',
      { alias_name: 'developers', alias_mount_accessor: accessor },
      200,
    );
    expect(lookup.body.data.id).toBe(gid);

    // The provider drops the group: the next login leaves it, and the entity's earlier token loses the policy too.
    const second = await login(['sales']);
    expect(second.entity_id).toBe(first.entity_id);
    expect(second.identity_policies).toBeUndefined();
    expect((await must('GET', `identity/group/id/${gid}`, undefined, 200)).body.data.member_entity_ids).toBeNull();
    expect((await d.req('GET', 'secret/data/app', undefined, { token: first.client_token })).status).toBe(403);
    expect((await must('GET', `identity/entity/id/${first.entity_id}`, undefined, 200)).body.data.group_ids).toEqual(
      [],
    );
  });
});
