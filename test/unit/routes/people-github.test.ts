/**
 * github auth through the real router and core against a strict GitHub API fake
 * (test/fakes/github-api.ts) and against the behaviour of hvac's mock GitHub server: config
 * (hvac's configure/read answers), team and user maps, login with org membership, team and user
 * policies, pagination past 100 organizations and teams, refusals as 400 (never 500).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GithubApiFake, HvacMockGithub } from '../../fakes/github-api.js';
import { cleanup, startHarness, type Harness } from '../../support/harness.js';

let d: Harness;
let gh: GithubApiFake;
let hvacMock: HvacMockGithub;

async function must(method: string, path: string, body?: unknown, status = 204) {
  const r = await d.req(method, path, body);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}
const login = (token: string, mount = 'github') => d.req('POST', `auth/${mount}/login`, { token }, { token: null });

beforeAll(async () => {
  d = await startHarness();
  gh = await new GithubApiFake().start();
  hvacMock = await new HvacMockGithub().start();
  await must('POST', 'sys/auth/github', { type: 'github' });
}, 30_000);
afterAll(async () => {
  await d?.stop();
  await gh?.stop();
  await hvacMock?.stop();
  if (d) cleanup(d.dir);
});

describe('github config and maps (hvac test_github.py answers)', () => {
  it('configures and reads back organization, base_url, ttl and max_ttl as given', async () => {
    await must('POST', 'auth/github/config', {
      organization: 'some-test-org',
      base_url: '/',
      ttl: '500m',
      max_ttl: '',
    });
    const r = await must('GET', 'auth/github/config', undefined, 200);
    expect(r.body.data).toMatchObject({
      organization: 'some-test-org',
      base_url: '/',
      ttl: 30000,
      max_ttl: 0,
      organization_id: 0,
    });
    const bad = await d.req('POST', 'auth/github/config', { organization: '' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(['organization is a required parameter']);
    expect((await d.req('POST', 'auth/github/config', { organization: 'x', base_url: 'ftp://x' })).status).toBe(400);
  });

  it('maps teams and users to policies and reads them as {key, value}; an unmapped key reads with data', async () => {
    await must('POST', 'auth/github/map/teams/hvac', { value: 'default,root' });
    expect((await must('GET', 'auth/github/map/teams/hvac', undefined, 200)).body.data).toEqual({
      key: 'hvac',
      value: 'default,root',
    });
    await must('POST', 'auth/github/map/users/hvac-user', {});
    expect((await must('GET', 'auth/github/map/users/hvac-user', undefined, 200)).body.data).toEqual({
      key: 'hvac-user',
      value: '',
    });
    const none = await must('GET', 'auth/github/map/teams/nobody', undefined, 200);
    expect('data' in none.body).toBe(true);
    expect((await must('LIST', 'auth/github/map/teams', undefined, 200)).body.data.keys).toEqual(['hvac']);
    await must('DELETE', 'auth/github/map/teams/hvac');
  });
});

describe('github login against the strict fake', () => {
  it('logs in a member: org and team policies, user policies, metadata, display name, same entity next time', async () => {
    const acme = gh.org('Acme');
    const other = gh.org('other');
    const alice = gh.user('alice', {
      orgs: [other, acme],
      teams: [
        { name: 'Platform Team', org: acme },
        { name: 'ops', org: other },
      ],
    });
    await must('POST', 'auth/github/config', {
      organization: 'acme',
      base_url: `${gh.url}/`,
      token_policies: 'base',
      ttl: '',
      max_ttl: '',
    });
    await must('POST', 'auth/github/map/teams/platform-team', { value: 'platform' });
    await must('POST', 'auth/github/map/teams/ops', { value: 'ops-of-other-org' });
    await must('POST', 'auth/github/map/users/alice', { value: 'alice-own' });
    const r = await login(alice.token);
    expect(r.status, r.text).toBe(200);
    expect(r.body.auth.policies).toEqual(['alice-own', 'base', 'default', 'platform']);
    expect(r.body.auth.metadata).toEqual({ username: 'alice', org: 'Acme' });
    const self = await d.req('GET', 'auth/token/lookup-self', undefined, { token: r.body.auth.client_token });
    expect(self.body.data.display_name).toBe('github-alice');
    // The organization id was learnt at the first login (trust on first use) and is kept.
    expect((await must('GET', 'auth/github/config', undefined, 200)).body.data.organization_id).toBe(acme.id);
    expect((await login(alice.token)).body.auth.entity_id).toBe(r.body.auth.entity_id);
    // Every call carried the token as a bearer and went to the documented paths.
    expect(gh.server.log.map((l) => l.path.split('?')[0])).toEqual(
      expect.arrayContaining(['/user', '/orgs/acme', '/user/orgs', '/user/teams']),
    );
  });

  it('refuses a user outside the organization with 400 "user is not part of required org"', async () => {
    const bob = gh.user('bob', { orgs: [gh.org('elsewhere')] });
    const r = await login(bob.token);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['user is not part of required org']);
  });

  it('refuses an unknown token and a token without read:org with 400, a missing token with 400 naming it', async () => {
    const bad = await login('ghp_not-a-real-token');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/GitHub refused the token/);
    expect(JSON.stringify(bad.body)).not.toContain('ghp_not-a-real-token');
    const noScope = gh.user('carol', { scopes: [] });
    expect((await login(noScope.token)).status).toBe(400);
    const none = await d.req('POST', 'auth/github/login', {}, { token: null });
    expect(none.status).toBe(400);
    expect(none.body.errors[0]).toMatch(/^token: /);
  });

  it("finds the organization and teams past the first page (GitHub's Link pagination)", async () => {
    const target = gh.org('deep-org');
    const many = Array.from({ length: 130 }, (_, i) => gh.org(`filler-${i}`));
    const dave = gh.user('dave', {
      orgs: [...many, target],
      teams: [...many.slice(0, 120).map((o) => ({ name: `t-${o.login}`, org: o })), { name: 'deep-team', org: target }],
    });
    await must('POST', 'auth/github/config', { organization: 'deep-org', base_url: gh.url });
    await must('POST', 'auth/github/map/teams/deep-team', { value: 'deep' });
    const before = gh.server.log.length;
    const r = await login(dave.token);
    expect(r.status, r.text).toBe(200);
    expect(r.body.auth.policies).toContain('deep');
    const calls = gh.server.log.slice(before).map((l) => l.path);
    expect(calls.filter((p) => p.startsWith('/user/orgs')).length).toBe(2);
    expect(calls.filter((p) => p.startsWith('/user/teams')).length).toBe(2);
  });

  it('answers 502 naming GitHub (not 500) when the API cannot be reached', async () => {
    await must('POST', 'auth/github/config', { organization: 'x', base_url: 'http://127.0.0.1:1/' });
    const r = await login('anything');
    expect(r.status).toBe(502);
    expect(r.body.errors[0]).toMatch(/GitHub API at http:\/\/127\.0\.0\.1:1\/ unreachable/);
  });
});

describe("github login against hvac's mock GitHub behaviour", () => {
  it('logs in with "valid-token" and refuses "invalid-token" with "user is not part of required org"', async () => {
    await must('POST', 'sys/auth/test-github', { type: 'github' });
    await must('POST', 'auth/test-github/config', {
      organization: 'hvac',
      base_url: `http://localhost:${hvacMock.server.port}/`,
    });
    const ok = await login('valid-token', 'test-github');
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.auth.metadata).toEqual({ username: 'hvac-dude', org: 'hvac' });
    const no = await login('invalid-token', 'test-github');
    expect(no.status).toBe(400);
    expect(no.body.errors).toEqual(['user is not part of required org']);
  });
});
