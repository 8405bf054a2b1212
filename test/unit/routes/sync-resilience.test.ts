/**
 * Issue 19: what real providers do that a happy-path fake never does, through the real router and
 * core (test/support/harness.ts) against the extended fakes. One test per behaviour: GitHub rate limits answered 403 (waited out, the whole
 * destination slowed down), Vercel targets changed on a destination (variables moved), Key Vault's
 * asynchronous delete and recover (409s waited out; our value wins), provider tag limits checked when
 * the destination is written, and self-healing of transient failures (while credential errors stay
 * failed until the destination changes).
 *
 * The core runs with 2 attempts of fast backoff and the default 5-minute reconciliation period, so
 * a failure that used to be given up after its retries would not heal within these tests' bounds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, cleanup, type Harness } from '../../support/harness.js';
import { AzureFake } from '../../fakes/azure.js';
import { GithubFake } from '../../fakes/github.js';
import { VercelFake } from '../../fakes/vercel.js';
import { until } from '../../fakes/wait.js';

let d: Harness;
let accessor = '';
const az = new AzureFake();
const gh = new GithubFake();
const vc = new VercelFake();
const loopback = (port: number) => ({ allowed_ipv4_addresses: ['127.0.0.1/32'], allowed_ports: [port] });
const up = (s: string) => s.toUpperCase().replace(/[^A-Z0-9_]/g, '_');

type Rec = { sync_status: string; error?: string };
async function records(type: string, name: string): Promise<Rec[]> {
  const r = await d.req('GET', `sys/sync/destinations/${type}/${name}/associations`);
  return Object.values((r.body?.data?.associated_secrets ?? {}) as Record<string, Rec>);
}
const allSynced = (n: number) => (rs: Rec[]) => rs.length === n && rs.every((r) => r.sync_status === 'SYNCED');

beforeAll(async () => {
  await Promise.all([az.start(), gh.start(), vc.start()]);
  d = await startHarness({
    env: {
      KEYHOLD_SYNC_RETRY_BASE_MS: '100',
      KEYHOLD_SYNC_RETRY_MAX_MS: '3000',
      KEYHOLD_SYNC_MAX_ATTEMPTS: '2',
      KEYHOLD_SYNC_TIMEOUT_MS: '3000',
      KEYHOLD_SYNC_SET_WAIT_MS: '2000',
    },
  });
  accessor = (await d.req('GET', 'sys/mounts')).body.data['secret/'].accessor;
}, 60_000);

afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
  await Promise.all([az.stop(), gh.stop(), vc.stop()]);
});

describe('issue 19', () => {
  it('GitHub: a 403 rate limit with retry-after is waited out, and the whole destination slows down', async () => {
    const body = {
      access_token: gh.token,
      repository_owner: gh.owner,
      repository_name: gh.repo,
      endpoint_url: gh.url,
      ...loopback(gh.server.port),
    };
    expect((await d.req('POST', 'sys/sync/destinations/repohost/rl', body)).status).toBe(200);
    const data = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}`, `v${i}`]));
    for (const s of ['rl/a', 'rl/b']) await d.req('POST', `secret/data/${s}`, { data });
    // The first request is refused with a secondary rate limit (403, retry-after: 2 s); GitHub
    // refuses every request until then.
    gh.rateLimit(1, 'secondary', 2);
    const t0 = Date.now();
    for (const s of ['rl/a', 'rl/b'])
      expect(
        (await d.req('POST', 'sys/sync/destinations/repohost/rl/associations/set', { mount: 'secret', secret_name: s }))
          .status,
      ).toBe(200);
    const rs = await until(() => records('repohost', 'rl'), allSynced(12), 20_000);
    expect(rs.every((r) => r.error === undefined)).toBe(true);
    for (const s of ['rl/a', 'rl/b'])
      for (const [k, v] of Object.entries(data)) expect(gh.valueOf(`VAULT_${up(accessor)}_${up(s)}_${up(k)}`)).toBe(v);
    // Waited what GitHub asked for ...
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    // ... and did not keep sending in the meantime: only the calls already in flight when the
    // first 403 arrived (at most the per-destination limit, 4) could be refused.
    expect(gh.rateLimited).toBeGreaterThanOrEqual(1);
    expect(gh.rateLimited).toBeLessThanOrEqual(4);
  });

  it('Vercel: changed deployment_environments move the variables (PATCH), no ENV_CONFLICT, no duplicates', async () => {
    const body = {
      access_token: vc.token,
      project_id: vc.projectId,
      team_id: vc.teamId,
      deployment_environments: ['production'],
      endpoint_url: vc.url,
      ...loopback(vc.server.port),
    };
    expect((await d.req('POST', 'sys/sync/destinations/hosting-project/tg', body)).status).toBe(200);
    await d.req('POST', 'secret/data/tg/app', { data: { token: 'one' } });
    await d.req('POST', 'sys/sync/destinations/hosting-project/tg/associations/set', {
      mount: 'secret',
      secret_name: 'tg/app',
    });
    const name = `VAULT_${up(accessor)}_TG_APP_TOKEN`;
    await until(
      () => vc.allOf(name).map((e) => [e.value, e.target.join(',')]),
      (v) => JSON.stringify(v) === JSON.stringify([['one', 'production']]),
    );

    // Overlapping targets: Vercel's upsert answers 400 ENV_CONFLICT; the variable is moved instead.
    expect(
      (
        await d.req('POST', 'sys/sync/destinations/hosting-project/tg', {
          deployment_environments: ['preview', 'production'],
        })
      ).status,
    ).toBe(200);
    await until(
      () => vc.allOf(name).map((e) => [e.value, [...e.target].sort().join(',')]),
      (v) => JSON.stringify(v) === JSON.stringify([['one', 'preview,production']]),
    );
    await d.req('POST', 'secret/data/tg/app', { data: { token: 'two' } });
    await until(
      () => vc.allOf(name).map((e) => e.value),
      (v) => JSON.stringify(v) === '["two"]',
    );
    await until(() => records('hosting-project', 'tg'), allSynced(1));

    // Disjoint targets: an upsert would create a second variable; keyhold moves its own one.
    expect(
      (await d.req('POST', 'sys/sync/destinations/hosting-project/tg', { deployment_environments: 'development' }))
        .status,
    ).toBe(200);
    await until(
      () => vc.allOf(name).map((e) => [e.value, e.target.join(',')]),
      (v) => JSON.stringify(v) === JSON.stringify([['two', 'development']]),
    );
    await until(() => records('hosting-project', 'tg'), allSynced(1));
  });

  it('Azure: delete and recover take seconds; the 409s in between are waited out and our value wins', async () => {
    az.deleteDelayMs = 1500;
    az.recoverDelayMs = 1500;
    try {
      const body = {
        key_vault_uri: az.url,
        client_id: az.clientId,
        client_secret: az.clientSecret,
        tenant_id: az.tenant,
        authority_host: az.url,
        ...loopback(az.server.port),
      };
      expect((await d.req('POST', 'sys/sync/destinations/provider-b-kv/ec', body)).status).toBe(200);
      const name = `vault-${accessor}-ec-db`.replace(/[^0-9A-Za-z-]/g, '-');
      await d.req('POST', 'secret/data/ec/db', { data: { password: 'old' } });
      await d.req('POST', 'sys/sync/destinations/provider-b-kv/ec/associations/set', {
        mount: 'secret',
        secret_name: 'ec/db',
      });
      await until(
        () => az.valueOf(name),
        (v) => v === '{"password":"old"}',
      );
      // Unsync (soft delete, "being deleted" for 1.5 s), change the value, associate again at once:
      // PUT 409 ObjectIsBeingDeleted, then 409 ObjectIsDeletedButRecoverable -> recover -> PUT 409
      // ObjectIsBeingRecovered until the recovery completes, then the PUT of the new value.
      await d.req('POST', 'sys/sync/destinations/provider-b-kv/ec/associations/remove', {
        mount: 'secret',
        secret_name: 'ec/db',
      });
      expect(az.valueOf(name)).toBeUndefined();
      await d.req('POST', 'secret/data/ec/db', { data: { password: 'new' } });
      await d.req('POST', 'sys/sync/destinations/provider-b-kv/ec/associations/set', {
        mount: 'secret',
        secret_name: 'ec/db',
      });
      await until(() => records('provider-b-kv', 'ec'), allSynced(1), 20_000);
      expect(az.valueOf(name)).toBe('{"password":"new"}');
      expect(az.conflicts.ObjectIsBeingDeleted ?? 0).toBeGreaterThan(0);
      expect(az.recovers).toBeGreaterThan(0);
      expect(az.deleted.has(name.toLowerCase())).toBe(false);
    } finally {
      az.deleteDelayMs = 0;
      az.recoverDelayMs = 0;
    }
  });

  it('Azure: custom_tags beyond Key Vault 15-tag limit (keyhold adds its own) are refused when the destination is written', async () => {
    const body = {
      key_vault_uri: az.url,
      client_id: az.clientId,
      client_secret: az.clientSecret,
      tenant_id: az.tenant,
      authority_host: az.url,
      ...loopback(az.server.port),
    };
    const tags = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`t${i}`, `v${i}`]));
    const bad = await d.req('POST', 'sys/sync/destinations/provider-b-kv/tags', { ...body, custom_tags: tags(15) });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body.errors.join(' ')).toMatch(
      /custom_tags: at most 14 tags: Azure Key Vault allows 15 tags per secret/,
    );
    expect((await d.req('GET', 'sys/sync/destinations/provider-b-kv/tags')).status).toBe(404);
    // 14 custom tags + keyhold's own = 15: accepted, and the fake (which refuses 16) takes the sync.
    expect(
      (await d.req('POST', 'sys/sync/destinations/provider-b-kv/tags', { ...body, custom_tags: tags(14) })).status,
    ).toBe(200);
    await d.req('POST', 'secret/data/tags/x', { data: { a: '1' } });
    await d.req('POST', 'sys/sync/destinations/provider-b-kv/tags/associations/set', {
      mount: 'secret',
      secret_name: 'tags/x',
    });
    await until(() => records('provider-b-kv', 'tags'), allSynced(1));
    expect(Object.keys(az.tagsOf(`vault-${accessor}-tags-x`.replace(/[^0-9A-Za-z-]/g, '-'))!)).toHaveLength(15);
    // An update that would exceed the limit is refused too, and the stored tags stay.
    const upd = await d.req('POST', 'sys/sync/destinations/provider-b-kv/tags', { custom_tags: tags(16) });
    expect(upd.status).toBe(400);
    expect(
      Object.keys((await d.req('GET', 'sys/sync/destinations/provider-b-kv/tags')).body.data.options.custom_tags),
    ).toHaveLength(14);
  });

  it('self-healing: a transient failure outlasting the retries heals without a new trigger; bad credentials stay failed until fixed', async () => {
    const good = {
      access_token: gh.token,
      repository_owner: gh.owner,
      repository_name: gh.repo,
      endpoint_url: gh.url,
      ...loopback(gh.server.port),
    };
    expect((await d.req('POST', 'sys/sync/destinations/repohost/heal', good)).status).toBe(200);
    expect(
      (await d.req('POST', 'sys/sync/destinations/repohost/creds', { ...good, access_token: 'wrong-token' })).status,
    ).toBe(200);
    await d.req('POST', 'secret/data/heal/s', { data: { k: 'v1' } });
    gh.server.failAlways({ status: 502, path: /\/actions\/secrets\// });
    try {
      await d.req('POST', 'sys/sync/destinations/repohost/heal/associations/set', {
        mount: 'secret',
        secret_name: 'heal/s',
      });
      await d.req('POST', 'sys/sync/destinations/repohost/creds/associations/set', {
        mount: 'secret',
        secret_name: 'heal/s',
      });
      await until(
        () => records('repohost', 'heal'),
        (rs) => rs.length === 1 && rs[0]!.sync_status === 'EXTERNAL_SERVICE_ERROR',
      );
      // Longer than both attempts of fast backoff (100 ms, 200 ms).
      await new Promise((r) => setTimeout(r, 1500));
    } finally {
      gh.server.heal();
    }
    const name = `VAULT_${up(accessor)}_HEAL_S_K`;
    await until(() => records('repohost', 'heal'), allSynced(1), 15_000);
    expect(gh.valueOf(name)).toBe('v1');
    // 401 Bad credentials: CLIENT_SIDE_ERROR, not retried (no new request) ...
    await until(
      () => records('repohost', 'creds'),
      (rs) => rs[0]?.sync_status === 'CLIENT_SIDE_ERROR',
    );
    const before = gh.server.count('PUT', /HEAL_S_K$/) + gh.server.count('GET', /public-key$/);
    await new Promise((r) => setTimeout(r, 2000));
    expect(gh.server.count('PUT', /HEAL_S_K$/) + gh.server.count('GET', /public-key$/)).toBe(before);
    expect((await records('repohost', 'creds'))[0]!.sync_status).toBe('CLIENT_SIDE_ERROR');
    // ... until the destination changes.
    expect((await d.req('POST', 'sys/sync/destinations/repohost/creds', { access_token: gh.token })).status).toBe(200);
    await until(() => records('repohost', 'creds'), allSynced(1));
  });
});
