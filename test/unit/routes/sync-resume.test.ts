/**
 * A retry resumes where the last attempt stopped (secret-key granularity under a tight provider
 * rate limit): entries already written with the same value are not written again, so a link with
 * more keys than the provider allows per rate-limit window still reaches SYNCED. Through the real
 * router and core (test/support/harness.ts) against the strict GitLab fake limited to 2 requests
 * per second (429), and the GitHub fake with a primary limit of 2 requests per second (403 with
 * x-ratelimit-*); every wait is bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, cleanup, type Harness } from '../../support/harness.js';
import { GithubFake } from '../../fakes/github.js';
import { GitlabFake } from '../../fakes/gitlab.js';
import { until } from '../../fakes/wait.js';

let d: Harness;
const gl = new GitlabFake();
const gh = new GithubFake();
let ACC = '';
const KEYS = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6'];
const nameOf = (k: string) => `VAULT_${ACC}_CI_MANY_${k.toUpperCase()}`;

type Rec = { sync_status: string; error?: string; sub_key?: string };
const records = async (path = 'gitlab/tight'): Promise<Rec[]> =>
  Object.values(
    ((await d.req('GET', `sys/sync/destinations/${path}/associations`)).body?.data?.associated_secrets ?? {}) as Record<
      string,
      Rec
    >,
  );
const allSynced = (n: number) => (rs: Rec[]) => rs.length === n && rs.every((r) => r.sync_status === 'SYNCED');
const writes = () => Object.fromEntries(KEYS.map((k) => [k, gl.writesOf(nameOf(k))]));

beforeAll(async () => {
  await Promise.all([gl.start(), gh.start()]);
  d = await startHarness({
    env: {
      KEYHOLD_SYNC_RETRY_BASE_MS: '100',
      KEYHOLD_SYNC_RETRY_MAX_MS: '1500',
      KEYHOLD_SYNC_MAX_ATTEMPTS: '3',
      KEYHOLD_SYNC_TIMEOUT_MS: '3000',
      KEYHOLD_SYNC_SET_WAIT_MS: '200',
    },
  });
  ACC = String((await d.req('GET', 'sys/mounts')).body.data['secret/'].accessor).toUpperCase();
  const c = await d.req('POST', 'sys/sync/destinations/gitlab/tight', {
    access_token: gl.token,
    project_id: String(gl.projectId),
    base_url: gl.url,
    allowed_ipv4_addresses: ['127.0.0.1/32'],
    allowed_ports: [gl.server.port],
  });
  expect(c.status, c.text).toBe(200);
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
  await Promise.all([gl.stop(), gh.stop()]);
});

describe('a retry resumes under a rate limit tighter than the link (secret-key granularity)', () => {
  it('six keys through 2 requests per second: SYNCED, every key once', async () => {
    // GitLab allows 2 requests per 1 s window here; a secret of 6 keys needs 6 writes.
    gl.rateLimit = 2;
    gl.windowMs = 1000;
    const data = Object.fromEntries(KEYS.map((k) => [k, `value-of-${k}`]));
    expect((await d.req('POST', 'secret/data/ci/many', { data })).status).toBe(200);
    const s = await d.req('POST', 'sys/sync/destinations/gitlab/tight/associations/set', {
      mount: 'secret',
      secret_name: 'ci/many',
    });
    expect(s.status, s.text).toBe(200);
    // Restarting from the first key on each retry would never get past the third: bounded wait.
    const rs = await until(records, allSynced(KEYS.length), 20_000);
    expect(rs.every((r) => r.error === undefined)).toBe(true);
    for (const k of KEYS) expect(gl.valueOf(nameOf(k))).toBe(data[k]);
    // The limit did bite (the attempts were cut off) ...
    expect(gl.throttled).toBeGreaterThan(0);
    // ... and no key was written twice: each retry went on from where the last one stopped.
    expect(writes()).toEqual(Object.fromEntries(KEYS.map((k) => [k, 1])));
  });

  it('a new version: only the changed key is written again, a removed key is deleted', async () => {
    const deletesBefore = gl.server.count('DELETE', /\/variables\//);
    const data = Object.fromEntries(KEYS.filter((k) => k !== 'k5').map((k) => [k, `value-of-${k}`]));
    data.k2 = 'changed-k2';
    expect((await d.req('POST', 'secret/data/ci/many', { data })).status).toBe(200);
    await until(
      () => [gl.valueOf(nameOf('k2')), gl.valueOf(nameOf('k5')) ?? null],
      ([k2, k5]) => k2 === 'changed-k2' && k5 === null,
      20_000,
    );
    await until(records, allSynced(KEYS.length - 1), 20_000);
    for (const k of Object.keys(data)) expect(gl.valueOf(nameOf(k))).toBe(data[k]);
    expect(gl.server.count('DELETE', /\/variables\//) - deletesBefore).toBe(1);
    expect(writes()).toEqual({ k1: 1, k2: 2, k3: 1, k4: 1, k5: 1, k6: 1 });
  });

  it('setting the association again re-pushes every key once, and gets through the limit too', async () => {
    const before = writes();
    const s = await d.req('POST', 'sys/sync/destinations/gitlab/tight/associations/set', {
      mount: 'secret',
      secret_name: 'ci/many',
    });
    expect(s.status, s.text).toBe(200);
    const kept = KEYS.filter((k) => k !== 'k5');
    await until(
      async () => ({ w: writes(), rs: await records() }),
      ({ w, rs }) => kept.every((k) => w[k] === before[k]! + 1) && allSynced(kept.length)(rs),
      20_000,
    );
    expect(writes()).toEqual({ ...before, ...Object.fromEntries(kept.map((k) => [k, before[k]! + 1])) });
  });
});

describe("the same under GitHub's primary rate limit (403 with x-ratelimit-reset)", () => {
  it('six keys through 2 requests per second: SYNCED, every secret written once', async () => {
    const body = {
      access_token: gh.token,
      repository_owner: gh.owner,
      repository_name: gh.repo,
      endpoint_url: gh.url,
      allowed_ipv4_addresses: ['127.0.0.1/32'],
      allowed_ports: [gh.server.port],
      granularity: 'secret-key',
    };
    expect((await d.req('POST', 'sys/sync/destinations/repohost/tight', body)).status).toBe(200);
    const data = Object.fromEntries(KEYS.map((k) => [k, `gh-value-of-${k}`]));
    expect((await d.req('POST', 'secret/data/gh/many', { data })).status).toBe(200);
    gh.perWindow(2, 1000);
    const s = await d.req('POST', 'sys/sync/destinations/repohost/tight/associations/set', {
      mount: 'secret',
      secret_name: 'gh/many',
    });
    expect(s.status, s.text).toBe(200);
    const rs = await until(() => records('repohost/tight'), allSynced(KEYS.length), 20_000);
    expect(rs.every((r) => r.error === undefined)).toBe(true);
    const ghName = (k: string) => `VAULT_${ACC}_GH_MANY_${k.toUpperCase()}`;
    for (const k of KEYS) expect(gh.valueOf(ghName(k))).toBe(data[k]);
    expect(gh.rateLimited).toBeGreaterThan(0);
    const written = (k: string) =>
      gh.server.log.filter(
        (l) => l.method === 'PUT' && l.path.endsWith(`/actions/secrets/${ghName(k)}`) && l.status < 300,
      ).length;
    expect(Object.fromEntries(KEYS.map((k) => [k, written(k)]))).toEqual(Object.fromEntries(KEYS.map((k) => [k, 1])));
  });
});
