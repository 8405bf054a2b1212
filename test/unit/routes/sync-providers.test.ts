/**
 * End to end against each provider's real protocol: AWS Secrets Manager on the moto server (behind a
 * failure-injecting proxy), and the Azure, Google, GitHub and Vercel fakes. For every type: write a KV
 * secret, associate it, see it arrive; update it, see the new value; provider down ->
 * EXTERNAL_SERVICE_ERROR, then recovery; remove, see it gone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SecretsManagerClient,
  CreateSecretCommand,
  GetSecretValueCommand,
  DescribeSecretCommand,
  ListSecretsCommand,
} from '@aws-sdk/client-secrets-manager';
import { startHarness, cleanup, type Harness } from '../../support/harness.js';
import { startMoto, type Moto } from '../../support/moto.js';
import { AzureFake } from '../../fakes/azure.js';
import { GoogleFake } from '../../fakes/google.js';
import { GithubFake } from '../../fakes/github.js';
import { VercelFake } from '../../fakes/vercel.js';
import { failingProxy } from '../../fakes/proxy.js';
import type { FakeServer } from '../../fakes/fake-server.js';
import { until } from '../../fakes/wait.js';

let d: Harness;
let moto: Moto;
let awsProxy: FakeServer;
let aws: SecretsManagerClient;
const az = new AzureFake();
const gcp = new GoogleFake();
const gh = new GithubFake();
const vc = new VercelFake();
let accessor = '';

const loopback = (port: number) => ({ allowed_ipv4_addresses: ['127.0.0.1/32'], allowed_ports: [port] });

async function awsValue(name: string): Promise<string | undefined> {
  try {
    return (await aws.send(new GetSecretValueCommand({ SecretId: name }))).SecretString;
  } catch (e) {
    if ((e as Error).name === 'ResourceNotFoundException') return undefined;
    throw e;
  }
}

interface Provider {
  type: string;
  server: () => FakeServer;
  body: () => Record<string, unknown>;
  /** External names of secret `path` with keys `keys` (one for secret-path). */
  names: (path: string, keys: string[]) => string[];
  read: (name: string) => Promise<string | undefined> | string | undefined;
  secretKey: boolean;
}

const up = (s: string) => s.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
const providers: Provider[] = [
  {
    type: 'provider-a-sm',
    server: () => awsProxy,
    body: () => ({
      access_key_id: 'testing',
      secret_access_key: 'testing',
      region: 'us-east-1',
      endpoint_url: awsProxy.url,
      custom_tags: { team: 'payments' },
      ...loopback(awsProxy.port),
    }),
    names: (p) => [`vault/${accessor}/${p}`],
    read: awsValue,
    secretKey: false,
  },
  {
    type: 'provider-b-kv',
    server: () => az.server,
    body: () => ({
      key_vault_uri: az.url,
      client_id: az.clientId,
      client_secret: az.clientSecret,
      tenant_id: az.tenant,
      authority_host: az.url,
      ...loopback(az.server.port),
    }),
    names: (p) => [`vault-${accessor}-${p}`.replace(/[^0-9A-Za-z-]/g, '-')],
    read: (n) => az.valueOf(n),
    secretKey: false,
  },
  {
    type: 'provider-c-sm',
    server: () => gcp.server,
    body: () => ({ credentials: gcp.credentials(), endpoint_url: gcp.url, ...loopback(gcp.server.port) }),
    names: (p) => [`vault_${accessor}_${p}`.replace(/[^A-Za-z0-9_-]/g, '_')],
    read: (n) => gcp.valueOf(n),
    secretKey: false,
  },
  {
    type: 'repohost',
    server: () => gh.server,
    body: () => ({
      access_token: gh.token,
      repository_owner: gh.owner,
      repository_name: gh.repo,
      endpoint_url: gh.url,
      ...loopback(gh.server.port),
    }),
    names: (p, keys) => keys.map((k) => `VAULT_${up(accessor)}_${up(p)}_${up(k)}`),
    read: (n) => gh.valueOf(n),
    secretKey: true,
  },
  {
    type: 'hosting-project',
    server: () => vc.server,
    body: () => ({
      access_token: vc.token,
      project_id: vc.projectId,
      team_id: vc.teamId,
      deployment_environments: ['production'],
      endpoint_url: vc.url,
      ...loopback(vc.server.port),
    }),
    names: (p, keys) => keys.map((k) => `VAULT_${up(accessor)}_${up(p)}_${up(k)}`),
    read: (n) => vc.valueOf(n),
    secretKey: true,
  },
];

/** What each external entry should hold for `data`. */
function expected(p: Provider, path: string, data: Record<string, string>): Record<string, string> {
  const keys = Object.keys(data).sort();
  if (!p.secretKey)
    return { [p.names(path, keys)[0]!]: JSON.stringify(Object.fromEntries(keys.map((k) => [k, data[k]]))) };
  return Object.fromEntries(keys.map((k) => [p.names(path, [k])[0]!, data[k]!]));
}

async function readAll(p: Provider, names: string[]): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const n of names) out[n] = await p.read(n);
  return out;
}

const statuses = async (type: string, name: string): Promise<string[]> => {
  const r = await d.req('GET', `sys/sync/destinations/${type}/${name}/associations`);
  return Object.values((r.body?.data?.associated_secrets ?? {}) as Record<string, { sync_status: string }>).map(
    (x) => x.sync_status,
  );
};

beforeAll(async () => {
  [moto] = await Promise.all([startMoto(), az.start(), gcp.start(), gh.start(), vc.start()]);
  awsProxy = await failingProxy(moto.endpoint).start();
  aws = new SecretsManagerClient({
    region: 'us-east-1',
    endpoint: moto.endpoint,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  d = await startHarness({
    env: {
      KEYHOLD_SYNC_RETRY_BASE_MS: '100',
      KEYHOLD_SYNC_RETRY_MAX_MS: '400',
      KEYHOLD_SYNC_TIMEOUT_MS: '1500',
      KEYHOLD_SYNC_SET_WAIT_MS: '3000',
    },
  });
  accessor = (await d.req('GET', 'sys/mounts')).body.data['secret/'].accessor;
  for (const p of providers) {
    const r = await d.req('POST', `sys/sync/destinations/${p.type}/e2e`, p.body());
    expect(r.status, r.text).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
  aws?.destroy();
  await Promise.all([moto?.stop(), awsProxy?.stop(), az.stop(), gcp.stop(), gh.stop(), vc.stop()]);
});

describe.each(providers)('$type', (p) => {
  const path = `e2e/${p.type}`;
  const v1 = { user: 'alice', password: 's3cret-1' };
  const v2 = { user: 'alice', password: 's3cret-2', extra: 'x' };
  const v3 = { user: 'bob', password: 's3cret-3', extra: 'y' };

  it('a written and associated secret arrives', async () => {
    await d.req('POST', `secret/data/${path}`, { data: v1 });
    const r = await d.req('POST', `sys/sync/destinations/${p.type}/e2e/associations/set`, {
      mount: 'secret',
      secret_name: path,
    });
    expect(r.status, r.text).toBe(200);
    const want = expected(p, path, v1);
    await until(
      () => readAll(p, Object.keys(want)),
      (got) => JSON.stringify(got) === JSON.stringify(want),
    );
    expect(await statuses(p.type, 'e2e')).toEqual(Object.keys(want).map(() => 'SYNCED'));
  });

  it('an update arrives within seconds', async () => {
    await d.req('POST', `secret/data/${path}`, { data: v2 });
    const want = expected(p, path, v2);
    await until(
      () => readAll(p, Object.keys(want)),
      (got) => JSON.stringify(got) === JSON.stringify(want),
    );
  });

  it('provider down -> EXTERNAL_SERVICE_ERROR, then recovery when it returns', async () => {
    const s = p.server();
    s.failAlways({ status: 503 });
    try {
      await d.req('POST', `secret/data/${path}`, { data: v3 });
      // One read showing the failure and its cause (a retry in flight shows SYNCING meanwhile).
      const recs = await until(
        async () =>
          Object.values(
            ((await d.req('GET', `sys/sync/destinations/${p.type}/e2e/associations`)).body?.data?.associated_secrets ??
              {}) as Record<string, { sync_status: string; error?: string }>,
          ),
        (rs) => rs.some((x) => x.sync_status === 'EXTERNAL_SERVICE_ERROR' && x.error),
      );
      expect(recs.find((x) => x.error)!.error).toMatch(/503/);
    } finally {
      s.heal();
    }
    const want = expected(p, path, v3);
    await until(
      () => readAll(p, Object.keys(want)),
      (got) => JSON.stringify(got) === JSON.stringify(want),
    );
    await until(
      () => statuses(p.type, 'e2e'),
      (st) => st.length === Object.keys(want).length && st.every((x) => x === 'SYNCED'),
    );
  });

  it('remove deletes it at the provider', async () => {
    const r = await d.req('POST', `sys/sync/destinations/${p.type}/e2e/associations/remove`, {
      mount: 'secret',
      secret_name: path,
    });
    expect(r.status).toBe(200);
    const names = Object.keys(expected(p, path, v3));
    await until(
      () => readAll(p, names),
      (got) => Object.values(got).every((v) => v === undefined),
    );
    expect(await statuses(p.type, 'e2e')).toEqual([]);
  });
});

describe('provider specifics', () => {
  it('AWS: secrets carry the hashicorp:vault tag plus custom tags; KV delete unsyncs', async () => {
    await d.req('POST', 'secret/data/tags', { data: { a: '1' } });
    await d.req('POST', 'sys/sync/destinations/provider-a-sm/e2e/associations/set', {
      mount: 'secret',
      secret_name: 'tags',
    });
    const name = `vault/${accessor}/tags`;
    const desc = await aws.send(new DescribeSecretCommand({ SecretId: name }));
    expect(Object.fromEntries((desc.Tags ?? []).map((t) => [t.Key, t.Value]))).toEqual({
      'hashicorp:vault': '',
      team: 'payments',
    });
    await d.req('DELETE', 'secret/data/tags');
    await until(
      () => awsValue(name),
      (v) => v === undefined,
    );
    await until(
      () => statuses('provider-a-sm', 'e2e'),
      (s) => s.length === 1 && s[0] === 'UNSYNCED',
    );
    // Writing again re-creates it under the same name (force delete freed the name).
    await d.req('POST', 'secret/data/tags', { data: { a: '2' } });
    await until(
      () => awsValue(name),
      (v) => v === '{"a":"2"}',
    );
    await d.req('POST', 'sys/sync/destinations/provider-a-sm/e2e/associations/remove', {
      mount: 'secret',
      secret_name: 'tags',
    });
    const left = await aws.send(new ListSecretsCommand({}));
    expect((left.SecretList ?? []).map((s) => s.Name)).not.toContain(name);
  });

  it('AWS: a first sync is one CreateSecret call, an update one PutSecretValue; a secret made outside keyhold is overwritten', async () => {
    /** Operations the proxy has seen on one secret, in order (not moto's occasional 500, which the SDK retries). */
    const ops = (name: string) =>
      awsProxy.log
        .filter((l) => l.secretId === name && l.status < 500)
        .map((l) => l.target?.replace(/^secretsmanager\./, ''));
    const set = (secret: string) =>
      d.req('POST', 'sys/sync/destinations/provider-a-sm/e2e/associations/set', {
        mount: 'secret',
        secret_name: secret,
      });
    const synced = (secret: string) =>
      until(
        () => statuses('provider-a-sm', 'e2e'),
        (st) => st.length > 0 && st.every((x) => x === 'SYNCED'),
      ).then(() => secret);
    const calls = `vault/${accessor}/calls`;
    await d.req('POST', 'secret/data/calls', { data: { a: '1' } });
    expect((await set('calls')).status).toBe(200);
    await until(
      () => awsValue(calls),
      (v) => v === '{"a":"1"}',
    );
    await synced('calls');
    expect(ops(calls)).toEqual(['CreateSecret']);
    await d.req('POST', 'secret/data/calls', { data: { a: '2' } });
    await until(
      () => awsValue(calls),
      (v) => v === '{"a":"2"}',
    );
    // The proxy logs a call once it has relayed moto's answer: moto may show the value a moment before.
    await until(
      () => ops(calls),
      (o) => o.length >= 2,
    );
    expect(ops(calls)).toEqual(['CreateSecret', 'PutSecretValue']);
    // A name that already exists at the provider (created outside keyhold) is written, not refused.
    const name = `vault/${accessor}/preexisting`;
    await aws.send(new CreateSecretCommand({ Name: name, SecretString: 'made by hand' }));
    await d.req('POST', 'secret/data/preexisting', { data: { b: '1' } });
    await set('preexisting');
    await until(
      () => awsValue(name),
      (v) => v === '{"b":"1"}',
    );
    await synced('preexisting');
    await until(
      () => ops(name),
      (o) => o.length >= 2,
    );
    expect(ops(name)).toEqual(['CreateSecret', 'PutSecretValue']);
    expect(await statuses('provider-a-sm', 'e2e')).toEqual(['SYNCED', 'SYNCED']);
    for (const s of ['calls', 'preexisting'])
      await d.req('POST', 'sys/sync/destinations/provider-a-sm/e2e/associations/remove', {
        mount: 'secret',
        secret_name: s,
      });
  });

  it('Azure: the token is cached, renewed after expiry, and a 401 fetches a fresh one', async () => {
    const before = az.tokensIssued;
    await d.req('POST', 'secret/data/az', { data: { a: '1' } });
    await d.req('POST', 'sys/sync/destinations/provider-b-kv/e2e/associations/set', {
      mount: 'secret',
      secret_name: 'az',
    });
    await d.req('POST', 'secret/data/az', { data: { a: '2' } });
    const name = `vault-${accessor}-az`.replace(/_/g, '-');
    await until(
      () => az.valueOf(name),
      (v) => v === '{"a":"2"}',
    );
    expect(az.tokensIssued).toBe(before); // still the token of the first tests
    az.tokens.clear(); // the vault forgets every token: next call gets 401, then a new token
    await d.req('POST', 'secret/data/az', { data: { a: '3' } });
    await until(
      () => az.valueOf(name),
      (v) => v === '{"a":"3"}',
    );
    expect(az.tokensIssued).toBe(before + 1);
  });

  it('Azure: re-associating after an unsync recovers the soft-deleted secret', async () => {
    const name = `vault-${accessor}-az`.replace(/_/g, '-');
    await d.req('POST', 'sys/sync/destinations/provider-b-kv/e2e/associations/remove', {
      mount: 'secret',
      secret_name: 'az',
    });
    expect(az.deleted.has(name.toLowerCase())).toBe(true);
    const r = await d.req('POST', 'sys/sync/destinations/provider-b-kv/e2e/associations/set', {
      mount: 'secret',
      secret_name: 'az',
    });
    expect(
      Object.values(r.body.data.associated_secrets).map((x) => (x as { sync_status: string }).sync_status),
    ).toEqual(['SYNCED']);
    expect(az.valueOf(name)).toBe('{"a":"3"}');
    await d.req('POST', 'sys/sync/destinations/provider-b-kv/e2e/associations/remove', {
      mount: 'secret',
      secret_name: 'az',
    });
  });

  it('Google: credentials signed with another key are refused at the token endpoint -> CLIENT_SIDE_ERROR', async () => {
    const other = new GoogleFake();
    const forged = JSON.parse(other.credentials()) as Record<string, string>;
    const creds = gcp.credentials({ private_key: forged.private_key });
    await d.req('POST', 'sys/sync/destinations/provider-c-sm/forged', {
      credentials: creds,
      endpoint_url: gcp.url,
      ...loopback(gcp.server.port),
    });
    await d.req('POST', 'secret/data/gcp', { data: { a: '1' } });
    const r = await d.req('POST', 'sys/sync/destinations/provider-c-sm/forged/associations/set', {
      mount: 'secret',
      secret_name: 'gcp',
    });
    const rec = Object.values(r.body.data.associated_secrets)[0] as { sync_status: string; error: string };
    expect(rec.sync_status).toBe('CLIENT_SIDE_ERROR');
    expect(rec.error).toMatch(/token: HTTP 400/);
    expect(gcp.lastTokenError).toBe('Invalid JWT Signature.');
    expect((await d.req('DELETE', 'sys/sync/destinations/provider-c-sm/forged?force_delete=true')).status).toBe(204);
  });

  it('GitHub: a rotated repository key is fetched again and the value still opens', async () => {
    await d.req('POST', 'secret/data/gh', { data: { token: 't1' } });
    await d.req('POST', 'sys/sync/destinations/repohost/e2e/associations/set', { mount: 'secret', secret_name: 'gh' });
    const name = `VAULT_${up(accessor)}_GH_TOKEN`;
    expect(gh.valueOf(name)).toBe('t1');
    gh.rotateKey();
    await d.req('POST', 'secret/data/gh', { data: { token: 't2' } });
    await until(
      () => gh.valueOf(name),
      (v) => v === 't2',
    );
    expect(gh.server.log.filter((l) => l.method === 'PUT' && l.status === 422)).toHaveLength(1);
    await d.req('POST', 'sys/sync/destinations/repohost/e2e/associations/remove', {
      mount: 'secret',
      secret_name: 'gh',
    });
    expect(gh.names()).toEqual([]);
  });

  it('Vercel: 429 with Retry-After is honoured and retried; a slow reply ends UNKNOWN, then syncs', async () => {
    await d.req('POST', 'secret/data/vc', { data: { K: 'v1' } });
    vc.server.failNext({ status: 429, retryAfter: 1, path: /\/env$/ });
    const r = await d.req('POST', 'sys/sync/destinations/hosting-project/e2e/associations/set', {
      mount: 'secret',
      secret_name: 'vc',
    });
    expect(
      Object.values(r.body.data.associated_secrets).map((x) => (x as { sync_status: string }).sync_status),
    ).toEqual(['EXTERNAL_SERVICE_ERROR']);
    const name = `VAULT_${up(accessor)}_VC_K`;
    await until(
      () => vc.valueOf(name),
      (v) => v === 'v1',
    );
    vc.server.failNext({ delayMs: 2500, path: /\/env$/ });
    await d.req('POST', 'secret/data/vc', { data: { K: 'v2' } });
    await until(
      () => statuses('hosting-project', 'e2e'),
      (s) => s.includes('UNKNOWN'),
    );
    await until(
      () => vc.valueOf(name),
      (v) => v === 'v2',
    );
    await until(
      () => statuses('hosting-project', 'e2e'),
      (s) => s.length === 1 && s[0] === 'SYNCED',
    );
  });

  it("no credential appears in any sync response or the core's log", async () => {
    const texts: string[] = [d.output()];
    for (const p of providers) texts.push((await d.req('GET', `sys/sync/destinations/${p.type}/e2e`)).text);
    const all = texts.join('\n');
    for (const secret of [
      az.clientSecret,
      gh.token,
      vc.token,
      JSON.parse(gcp.credentials()).private_key.split('\n')[1],
    ])
      expect(all).not.toContain(secret);
  });
});
