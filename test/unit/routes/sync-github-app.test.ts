/**
 * Issue 17 (secret sync): repohost authenticating as a GitHub App installation and organization
 * secrets, against the GitHub fake, which verifies the app JWT with the app's public key and accepts
 * only the installation tokens it issued. The app is registered under sys/sync/github-apps (Vault's
 * API, reference sync-wire.md 1.9).
 */
import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { sha256 } from '@noble/hashes/sha2.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, cleanup, type Harness } from '../../support/harness.js';
import { GithubFake } from '../../fakes/github.js';
import { until } from '../../fakes/wait.js';

let d: Harness;
let accessor = '';
const gh = new GithubFake();
const loopback = () => ({
  allowed_ipv4_addresses: ['127.0.0.1/32'],
  allowed_ports: [gh.server.port],
  endpoint_url: gh.url,
});
const up = (s: string) => s.toUpperCase().replace(/[^A-Z0-9_]/g, '_');

async function statuses(name: string): Promise<string[]> {
  const r = await d.req('GET', `sys/sync/destinations/repohost/${name}/associations`);
  return Object.values(
    (r.body?.data?.associated_secrets ?? {}) as Record<string, { sync_status: string; error?: string }>,
  ).map((x) => x.sync_status + (x.error ? ` ${x.error}` : ''));
}

beforeAll(async () => {
  await gh.start();
  d = await startHarness({
    env: { KEYHOLD_SYNC_RETRY_BASE_MS: '100', KEYHOLD_SYNC_RETRY_MAX_MS: '1000', KEYHOLD_SYNC_SET_WAIT_MS: '3000' },
  });
  accessor = (await d.req('GET', 'sys/mounts')).body.data['secret/'].accessor;
}, 60_000);

afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
  await gh.stop();
});

describe('GitHub Apps (sys/sync/github-apps)', () => {
  it('registers an app: key masked, fingerprint = base64(SHA-256(DER public key)), app_id fixed, bad keys refused', async () => {
    const r = await d.req('POST', 'sys/sync/github-apps/ci', { app_id: gh.appId, private_key: gh.appPrivateKey });
    expect(r.status, r.text).toBe(200);
    // Independent check of the fingerprint with @noble/hashes.
    const der = createPublicKey(gh.appPrivateKey).export({ type: 'spki', format: 'der' });
    const fp = Buffer.from(sha256(new Uint8Array(der))).toString('base64');
    expect(r.body.data).toEqual({ name: 'ci', app_id: gh.appId, private_key: '*****', fingerprint: fp });
    const read = await d.req('GET', 'sys/sync/github-apps/ci');
    expect(read.body.data.fingerprint).toBe(fp);
    expect(read.text).not.toContain('PRIVATE KEY');
    expect((await d.req('LIST', 'sys/sync/github-apps')).body.data.keys).toEqual(['ci']);
    const moved = await d.req('POST', 'sys/sync/github-apps/ci', { app_id: gh.appId + 1 });
    expect(moved.status).toBe(400);
    expect(moved.body.errors.join(' ')).toMatch(/^app_id: cannot be changed/);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    for (const private_key of ['not a key', ec]) {
      const bad = await d.req('POST', 'sys/sync/github-apps/bad', { app_id: 1, private_key });
      expect(bad.status).toBe(400);
      expect(bad.body.errors.join(' ')).toMatch(/^private_key: must be the app's RSA private key/);
      expect(bad.text).not.toContain('BEGIN');
    }
    expect(createHash('sha256').update(der).digest('base64')).toBe(fp);
  });

  it('organization secrets as the app installation: JWT verified by GitHub, token cached, visibility and selected ids sent', async () => {
    const body = {
      app_name: 'ci',
      installation_id: String(gh.installationId),
      secrets_location: 'organization',
      organization_name: gh.org,
      organization_visibility: 'selected',
      selected_repository_ids: [1296269, 42],
      ...loopback(),
    };
    const r = await d.req('POST', 'sys/sync/destinations/repohost/org', body);
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.connection_details).toMatchObject({
      app_name: 'ci',
      installation_id: String(gh.installationId),
      secrets_location: 'organization',
      organization_visibility: 'selected',
      selected_repository_ids: [1296269, 42],
      access_token: '',
    });
    await d.req('POST', 'secret/data/org/app', { data: { db: 'pw-1', api: 'key-1' } });
    await d.req('POST', 'sys/sync/destinations/repohost/org/associations/set', {
      mount: 'secret',
      secret_name: 'org/app',
    });
    await until(
      () => statuses('org'),
      (s) => s.length === 2 && s.every((x) => x === 'SYNCED'),
    );
    const name = `VAULT_${up(accessor)}_ORG_APP_DB`;
    expect(gh.orgSecrets.get(name)).toEqual({
      value: 'pw-1',
      visibility: 'selected',
      selected_repository_ids: [1296269, 42],
    });
    expect(gh.jwtRefusals).toEqual([]);
    expect(gh.installationTokensIssued).toBe(1);
    // A second sync reuses the cached installation token.
    await d.req('POST', 'secret/data/org/app', { data: { db: 'pw-2', api: 'key-1' } });
    await until(
      () => gh.orgSecrets.get(name)?.value,
      (v) => v === 'pw-2',
    );
    expect(gh.installationTokensIssued).toBe(1);
    // A token GitHub no longer accepts (revoked): a fresh one is fetched once and the sync succeeds.
    gh.installationTokens.clear();
    await d.req('POST', 'secret/data/org/app', { data: { db: 'pw-3', api: 'key-1' } });
    await until(
      () => gh.orgSecrets.get(name)?.value,
      (v) => v === 'pw-3',
    );
    expect(gh.installationTokensIssued).toBe(2);
    // The organization fields are fixed after creation (Vault: not updatable).
    const change = await d.req('POST', 'sys/sync/destinations/repohost/org', { organization_visibility: 'all' });
    expect(change.status).toBe(400);
    expect(change.body.errors.join(' ')).toMatch(/^organization_visibility: cannot be changed/);
    // Unsync deletes the organization secret.
    await d.req('POST', 'sys/sync/destinations/repohost/org/associations/remove', {
      mount: 'secret',
      secret_name: 'org/app',
    });
    await until(
      () => gh.orgSecrets.has(name),
      (v) => v === false,
    );
  });

  it('selected_repository_names are resolved to ids with GET /repos/{org}/{repo} (authorized), once per destination; an unknown name is a CLIENT_SIDE_ERROR naming it', async () => {
    const [apiId, webId] = [gh.orgRepos.get('api')!, gh.orgRepos.get('web')!];
    const body = {
      access_token: gh.token,
      secrets_location: 'organization',
      organization_name: gh.org,
      organization_visibility: 'selected',
      selected_repository_ids: [42],
      selected_repository_names: 'api, web',
      ...loopback(),
    };
    const r = await d.req('POST', 'sys/sync/destinations/repohost/by-name', body);
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.connection_details).toMatchObject({
      selected_repository_ids: [42],
      selected_repository_names: ['api', 'web'],
    });
    const lookups = gh.repoLookups;
    await d.req('POST', 'secret/data/by-name/a', { data: { k: 'v1' } });
    await d.req('POST', 'secret/data/by-name/b', { data: { k: 'v2' } });
    for (const s of ['by-name/a', 'by-name/b'])
      await d.req('POST', 'sys/sync/destinations/repohost/by-name/associations/set', {
        mount: 'secret',
        secret_name: s,
      });
    await until(
      () => statuses('by-name'),
      (s) => s.length === 2 && s.every((x) => x === 'SYNCED'),
    );
    for (const [sub, v] of [
      ['A', 'v1'],
      ['B', 'v2'],
    ] as const) {
      expect(gh.orgSecrets.get(`VAULT_${up(accessor)}_BY_NAME_${sub}_K`)).toEqual({
        value: v,
        visibility: 'selected',
        selected_repository_ids: [42, apiId, webId],
      });
    }
    // Two names, looked up once for both associations.
    expect(gh.repoLookups - lookups).toBe(2);
    const fixed = await d.req('POST', 'sys/sync/destinations/repohost/by-name', { selected_repository_names: ['api'] });
    expect(fixed.status).toBe(400);
    expect(fixed.body.errors.join(' ')).toMatch(/^selected_repository_names: cannot be changed/);

    // A name the organization does not have (or the token cannot see): nothing is pushed.
    const bad = await d.req('POST', 'sys/sync/destinations/repohost/by-bad-name', {
      ...body,
      selected_repository_ids: [],
      selected_repository_names: ['api', 'no-such-repo'],
    });
    expect(bad.status, bad.text).toBe(200);
    await d.req('POST', 'sys/sync/destinations/repohost/by-bad-name/associations/set', {
      mount: 'secret',
      secret_name: 'by-name/a',
    });
    const st = await until(
      () => statuses('by-bad-name'),
      (s) => s.length === 1 && s[0]!.startsWith('CLIENT_SIDE_ERROR'),
    );
    expect(st[0]).toMatch(/selected_repository_names: repository .*\/no-such-repo not found/);
    // The lookup needs GitHub's auth like any call: a bad token is refused (401), not answered.
    const before = gh.repoLookups;
    const noAuth = await fetch(`${gh.url}/repos/${gh.org}/api`, {
      headers: {
        Authorization: 'Bearer wrong',
        Accept: 'application/vnd.github+json',
        'X-GitHub-Api-Version': '2022-11-28',
      },
    });
    expect(noAuth.status).toBe(401);
    expect(gh.repoLookups).toBe(before);
    for (const n of ['by-name', 'by-bad-name'])
      expect((await d.req('DELETE', `sys/sync/destinations/repohost/${n}?force_delete=true`)).status).toBe(204);
  });

  it('installation tokens near expiry are renewed before use; repository secrets work with the app too', async () => {
    gh.installationTtlS = 4; // shorter than the 5-minute margin: renewed at half-life
    try {
      const r = await d.req('POST', 'sys/sync/destinations/repohost/repo', {
        app_name: 'ci',
        installation_id: String(gh.installationId),
        repository_owner: gh.owner,
        repository_name: gh.repo,
        ...loopback(),
      });
      expect(r.status, r.text).toBe(200);
      await d.req('POST', 'secret/data/repo/app', { data: { k: 'one' } });
      await d.req('POST', 'sys/sync/destinations/repohost/repo/associations/set', {
        mount: 'secret',
        secret_name: 'repo/app',
      });
      const name = `VAULT_${up(accessor)}_REPO_APP_K`;
      await until(
        () => gh.valueOf(name),
        (v) => v === 'one',
      );
      const issued = gh.installationTokensIssued;
      await new Promise((res) => setTimeout(res, 2500)); // past half of the token's life
      await d.req('POST', 'secret/data/repo/app', { data: { k: 'two' } });
      await until(
        () => gh.valueOf(name),
        (v) => v === 'two',
      );
      expect(gh.installationTokensIssued).toBe(issued + 1);
      expect(gh.jwtRefusals).toEqual([]);
    } finally {
      gh.installationTtlS = 3600;
    }
  });

  it('refuses bad combinations naming the field; an app in use cannot be removed; a wrong installation is a CLIENT_SIDE_ERROR', async () => {
    const base = { ...loopback() };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { secrets_location: 'organization', organization_name: gh.org, organization_visibility: 'all' },
        /^access_token: is required \(or app_name and installation_id/,
      ],
      [
        { access_token: 't', secrets_location: 'organization', organization_name: gh.org },
        /^organization_visibility: is required/,
      ],
      [
        {
          access_token: 't',
          secrets_location: 'organization',
          organization_name: gh.org,
          organization_visibility: 'selected',
        },
        /^selected_repository_ids: is required/,
      ],
      [
        {
          access_token: 't',
          secrets_location: 'organization',
          organization_name: gh.org,
          organization_visibility: 'all',
          selected_repository_ids: [1],
        },
        /^selected_repository_ids: applies only/,
      ],
      [
        {
          access_token: 't',
          secrets_location: 'organization',
          organization_name: gh.org,
          organization_visibility: 'private',
          selected_repository_names: ['api'],
        },
        /^selected_repository_names: applies only/,
      ],
      [
        {
          access_token: 't',
          secrets_location: 'organization',
          organization_name: gh.org,
          organization_visibility: 'selected',
          selected_repository_names: ['acme/api'],
        },
        /^selected_repository_names: "acme\/api" is not a repository name/,
      ],
      [
        { access_token: 't', repository_owner: 'o', repository_name: 'r', selected_repository_names: ['api'] },
        /^secrets_location: organization_\* and selected_repository_\* fields need/,
      ],
      [{ app_name: 'ci', repository_owner: 'o', repository_name: 'r' }, /^installation_id: is required/],
      [
        { app_name: 'nope', installation_id: '5', repository_owner: 'o', repository_name: 'r' },
        /^app_name: no GitHub App "nope"/,
      ],
      [{ access_token: 't', secrets_location: 'galaxy' }, /secrets_location/],
    ];
    for (const [body, re] of cases) {
      const r = await d.req('POST', 'sys/sync/destinations/repohost/bad', { ...base, ...body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors.join(' '), JSON.stringify(body)).toMatch(re);
    }
    const del = await d.req('DELETE', 'sys/sync/github-apps/ci');
    expect(del.status).toBe(400);
    expect(del.body.errors.join(' ')).toMatch(/GitHub App ci is used by destination repohost\//);
    expect(
      (
        await d.req('POST', 'sys/sync/destinations/repohost/wrong', {
          app_name: 'ci',
          installation_id: '999',
          repository_owner: gh.owner,
          repository_name: gh.repo,
          ...base,
        })
      ).status,
    ).toBe(200);
    await d.req('POST', 'secret/data/wrong', { data: { k: 'v' } });
    await d.req('POST', 'sys/sync/destinations/repohost/wrong/associations/set', {
      mount: 'secret',
      secret_name: 'wrong',
    });
    const st = await until(
      () => statuses('wrong'),
      (s) => s.length === 1 && s[0]!.startsWith('CLIENT_SIDE_ERROR'),
    );
    expect(st[0]).toMatch(/installation token: HTTP 404/);
  });
});
