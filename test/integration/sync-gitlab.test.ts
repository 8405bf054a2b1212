/**
 * The gitlab destination type (issue 31 part 4) against a strict GitLab fake (test/fakes/gitlab.ts):
 * project and group variables, environment scopes, protected/masked/raw, GitLab's masking rules
 * checked before sending, token scopes, rate limits, remove and purge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, cleanup, type Harness } from '../support/harness.js';
import { GitlabFake } from '../fakes/gitlab.js';
import { until } from '../fakes/wait.js';

let d: Harness;
const gl = new GitlabFake();
let ACC = '';
const net = () => ({ allowed_ipv4_addresses: ['127.0.0.1/32'], allowed_ports: [gl.server.port] });
const records = async (name: string) =>
  Object.values(
    ((await d.req('GET', `sys/sync/destinations/gitlab/${name}/associations`)).body?.data?.associated_secrets ??
      {}) as Record<string, { sync_status: string; error?: string; sub_key?: string }>,
  );

beforeAll(async () => {
  await gl.start();
  d = await startHarness({
    env: { KEYHOLD_SYNC_RETRY_BASE_MS: '100', KEYHOLD_SYNC_RETRY_MAX_MS: '500', KEYHOLD_SYNC_TIMEOUT_MS: '2000' },
  });
  ACC = String((await d.req('GET', 'sys/mounts')).body.data['secret/'].accessor).toUpperCase();
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
  await gl.stop();
});

describe('gitlab project destination', () => {
  it('syncs each key as a project variable with the configured flags; updates and removes', async () => {
    const c = await d.req('POST', 'sys/sync/destinations/gitlab/proj', {
      access_token: gl.token,
      project_id: gl.projectPath,
      base_url: gl.url,
      protected: true,
      raw: true,
      ...net(),
    });
    expect(c.status, c.text).toBe(200);
    expect(c.body.data.connection_details).toMatchObject({
      access_token: '*****',
      project_id: 'acme/app',
      environment_scope: '*',
      protected: true,
      masked: false,
      raw: true,
    });
    expect(c.body.data.options.granularity_level).toBe('secret-key');
    await d.req('POST', 'secret/data/ci/deploy', { data: { user: 'deployer', password: 'p@ss word$HOME' } });
    const s = await d.req('POST', 'sys/sync/destinations/gitlab/proj/associations/set', {
      mount: 'secret',
      secret_name: 'ci/deploy',
    });
    expect(s.status, s.text).toBe(200);
    const user = `VAULT_${ACC}_CI_DEPLOY_USER`;
    const pass = `VAULT_${ACC}_CI_DEPLOY_PASSWORD`;
    await until(
      () => [gl.valueOf(user), gl.valueOf(pass)],
      ([u, p]) => u === 'deployer' && p === 'p@ss word$HOME',
    );
    const v = gl.list('projects/42').find((x) => x.key === pass)!;
    expect(v).toMatchObject({
      protected: true,
      masked: false,
      raw: true,
      environment_scope: '*',
      variable_type: 'env_var',
    });
    await until(
      () => records('proj'),
      (r) => r.length === 2 && r.every((x) => x.sync_status === 'SYNCED'),
    );
    await d.req('POST', 'secret/data/ci/deploy', { data: { user: 'deployer2', password: 'p2' } });
    await until(
      () => [gl.valueOf(user), gl.valueOf(pass)],
      ([u, p]) => u === 'deployer2' && p === 'p2',
    );
    expect(gl.list('projects/42').length).toBe(2);
    await d.req('POST', 'sys/sync/destinations/gitlab/proj/associations/remove', {
      mount: 'secret',
      secret_name: 'ci/deploy',
    });
    await until(
      () => gl.list('projects/42').length,
      (n) => n === 0,
    );
  });

  it('a token without the api scope, or for another project, is a CLIENT_SIDE_ERROR naming it', async () => {
    await d.req('POST', 'secret/data/ci/x', { data: { k: 'value-1234' } });
    for (const [name, token, re] of [
      ['ro', gl.readOnlyToken, /403 insufficient_scope/],
      ['other', gl.otherProjectToken, /404 404 Project Not Found/],
    ] as const) {
      const c = await d.req('POST', `sys/sync/destinations/gitlab/${name}`, {
        access_token: token,
        project_id: String(gl.projectId),
        base_url: gl.url,
        ...net(),
      });
      expect(c.status, c.text).toBe(200);
      await d.req('POST', `sys/sync/destinations/gitlab/${name}/associations/set`, {
        mount: 'secret',
        secret_name: 'ci/x',
      });
      const r = await until(
        () => records(name),
        (rs) => rs.some((x) => x.sync_status === 'CLIENT_SIDE_ERROR'),
      );
      expect(r.find((x) => x.error)!.error).toMatch(re);
      expect((await d.req('DELETE', `sys/sync/destinations/gitlab/${name}?force_delete=true`)).status).toBe(204);
    }
  });

  it("GitLab's 429 holds the destination, then every variable arrives", async () => {
    await d.req('POST', 'sys/sync/destinations/gitlab/rl', {
      access_token: gl.token,
      project_id: String(gl.projectId),
      base_url: gl.url,
      ...net(),
    });
    const data = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}`, `v${i}`]));
    await d.req('POST', 'secret/data/ci/many', { data });
    gl.throttleNext = 2;
    try {
      await d.req('POST', 'sys/sync/destinations/gitlab/rl/associations/set', {
        mount: 'secret',
        secret_name: 'ci/many',
      });
      await until(
        () => records('rl'),
        (r) => r.length === 6 && r.every((x) => x.sync_status === 'SYNCED'),
        30_000,
      );
    } finally {
      gl.throttleNext = 0;
    }
    expect(gl.throttled).toBe(2);
    expect(d.output()).toMatch(/destination rate limited; its operations wait.*gitlab\/rl/);
    for (let i = 0; i < 6; i++) expect(gl.valueOf(`VAULT_${ACC}_CI_MANY_K${i}`)).toBe(`v${i}`);
    const del = await d.req('DELETE', 'sys/sync/destinations/gitlab/rl?purge=true');
    expect(del.status).toBeLessThan(300);
    await until(
      () => gl.list('projects/42').filter((v) => v.key.includes('_CI_MANY_')).length,
      (n) => n === 0,
    );
    await until(
      async () => (await d.req('GET', 'sys/sync/destinations/gitlab/rl')).status,
      (s) => s === 404,
    );
  });
});

describe('gitlab group destination with an environment scope and masking', () => {
  it('a value GitLab cannot mask is refused before sending, naming the rule; maskable values sync; other scopes are untouched', async () => {
    // A variable of the same key in another scope, made outside keyhold.
    const key = `VAULT_${ACC}_CI_GROUP_TOKEN`;
    gl.list('groups/7').push({
      key,
      value: 'outside-value',
      variable_type: 'env_var',
      protected: false,
      masked: false,
      raw: false,
      environment_scope: '*',
      description: null,
    });
    const c = await d.req('POST', 'sys/sync/destinations/gitlab/grp', {
      access_token: gl.token,
      group_id: String(gl.groupId),
      base_url: gl.url,
      environment_scope: 'production',
      masked: true,
      ...net(),
    });
    expect(c.status, c.text).toBe(200);
    await d.req('POST', 'secret/data/ci/group', {
      data: { token: 'dGhpcy1pcy1tYXNrYWJsZQ==', short: 'abc', spaced: 'has a space here' },
    });
    const before = gl.server.count('POST', /groups/);
    await d.req('POST', 'sys/sync/destinations/gitlab/grp/associations/set', {
      mount: 'secret',
      secret_name: 'ci/group',
    });
    const rs = await until(
      () => records('grp'),
      (r) => r.length === 3 && r.every((x) => x.sync_status !== 'PENDING' && x.sync_status !== 'SYNCING'),
    );
    const byKey = Object.fromEntries(rs.map((x) => [x.sub_key, x]));
    expect(byKey.token!.sync_status).toBe('SYNCED');
    expect(byKey.short).toMatchObject({
      sync_status: 'CLIENT_SIDE_ERROR',
      error: expect.stringMatching(/masking rule: a masked value must be 8 characters or longer/),
    });
    expect(byKey.spaced).toMatchObject({
      sync_status: 'CLIENT_SIDE_ERROR',
      error: expect.stringMatching(/masking rule: a masked value must not contain spaces/),
    });
    expect(gl.server.count('POST', /groups/) - before).toBe(1); // only the maskable one was sent
    expect(gl.valueOf(key, 'groups/7', 'production')).toBe('dGhpcy1pcy1tYXNrYWJsZQ==');
    expect(gl.list('groups/7').find((v) => v.environment_scope === 'production')!.masked).toBe(true);
    await d.req('POST', 'sys/sync/destinations/gitlab/grp/associations/remove', {
      mount: 'secret',
      secret_name: 'ci/group',
    });
    await until(
      () => gl.valueOf(key, 'groups/7', 'production'),
      (v) => v === undefined,
    );
    expect(gl.valueOf(key, 'groups/7', '*')).toBe('outside-value');
  });

  it('bad input is a 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ access_token: 't' }, /project_id/],
      [{ access_token: 't', project_id: '1', group_id: '2' }, /group_id/],
      [{ access_token: 't', project_id: 'bad id!' }, /project_id/],
      [{ access_token: 't', project_id: '1', environment_scope: 'a b' }, /environment_scope/],
      [{ access_token: 't', project_id: '1', base_url: 'ftp://x' }, /base_url/],
      [{ project_id: '1' }, /access_token/],
    ];
    for (const [body, re] of cases) {
      const r = await d.req('POST', 'sys/sync/destinations/gitlab/bad', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors.join(' ')).toMatch(re);
    }
    await d.req('POST', 'sys/sync/destinations/gitlab/fixed', { access_token: 't', project_id: '1', base_url: gl.url });
    const ch = await d.req('POST', 'sys/sync/destinations/gitlab/fixed', { project_id: '2' });
    expect(ch.status).toBe(400);
    expect(ch.body.errors.join(' ')).toMatch(/project_id.*cannot be changed/);
  });
});
