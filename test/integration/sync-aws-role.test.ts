/**
 * provider-a-sm without static keys (issue 31 part 2) end to end on moto, behind a strict STS front
 * (test/fakes/aws-sts.ts) that checks SigV4 signatures and verifies web identity tokens against
 * keyhold's JWKS: role_arn with AssumeRole (external id, session name), federation with
 * AssumeRoleWithWebIdentity, kms_key_id and replica_regions; the Secrets Manager calls use the STS
 * session's keys, never the source keys. Also Vault's type id `aws-sm` as an alias.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescribeSecretCommand, GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { startHarness, cleanup, type Harness } from '../support/harness.js';
import { startMoto, type Moto } from '../support/moto.js';
import { StsFront } from '../fakes/aws-sts.js';
import { until } from '../fakes/wait.js';

let d: Harness;
let moto: Moto;
let sts: StsFront;
let sm: SecretsManagerClient;
let kmsKeyArn = '';
let accessor = '';
const ROLE = 'arn:aws:iam::123456789012:role/keyhold-sync';

const net = () => ({ allowed_ipv4_addresses: ['127.0.0.1/32'], allowed_ports: [sts.server.port] });
const jwks = async () => (await d.req('GET', 'identity/oidc/.well-known/keys', undefined, { token: null })).body;
const statuses = async (type: string, name: string) =>
  Object.values(
    ((await d.req('GET', `sys/sync/destinations/${type}/${name}/associations`)).body?.data?.associated_secrets ??
      {}) as Record<string, { sync_status: string; error?: string }>,
  );

async function value(name: string): Promise<string | undefined> {
  try {
    return (await sm.send(new GetSecretValueCommand({ SecretId: name }))).SecretString;
  } catch (e) {
    if ((e as Error).name === 'ResourceNotFoundException') return undefined;
    throw e;
  }
}

beforeAll(async () => {
  moto = await startMoto();
  sts = await new StsFront(moto.endpoint).start();
  sm = new SecretsManagerClient({
    region: 'us-east-1',
    endpoint: moto.endpoint,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  const kms = new KMSClient({
    region: 'us-east-1',
    endpoint: moto.endpoint,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  kmsKeyArn = (await kms.send(new CreateKeyCommand({ Description: 'keyhold sync test' }))).KeyMetadata!.Arn!;
  kms.destroy();
  // The AWS default credential chain of this process (for a role_arn without keys) reads these.
  d = await startHarness({
    env: {
      KEYHOLD_SYNC_RETRY_BASE_MS: '100',
      KEYHOLD_SYNC_RETRY_MAX_MS: '400',
      KEYHOLD_SYNC_TIMEOUT_MS: '3000',
      AWS_ACCESS_KEY_ID: 'chainkey',
      AWS_SECRET_ACCESS_KEY: 'chainsecret',
      AWS_SESSION_TOKEN: undefined,
      AWS_PROFILE: undefined,
    },
  });
  accessor = (await d.req('GET', 'sys/mounts')).body.data['secret/'].accessor;
  await d.req('POST', 'secret/data/app/db', { data: { user: 'app', password: 'pw-1' } });
}, 60_000);

afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
  sm?.destroy();
  await Promise.all([sts?.stop(), moto?.stop()]);
});

describe('role_arn: AssumeRole from the given keys', () => {
  it('syncs with the STS session (signed AssumeRole with external id), encrypted with kms_key_id and replicated', async () => {
    const r = await d.req('POST', 'sys/sync/destinations/aws-sm/role', {
      access_key_id: 'testing',
      secret_access_key: 'testing',
      region: 'us-east-1',
      role_arn: ROLE,
      external_id: 'ext-123',
      role_session_name: 'keyhold-test',
      endpoint_url: sts.url,
      sts_endpoint: sts.url,
      kms_key_id: kmsKeyArn,
      replica_regions: ['eu-west-1'],
      ...net(),
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.type).toBe('aws-sm');
    expect(r.body.data.connection_details).toMatchObject({
      role_arn: ROLE,
      external_id: 'ext-123',
      secret_access_key: '*****',
      kms_key_id: kmsKeyArn,
      replica_regions: ['eu-west-1'],
      identity_token_ttl: 3600,
    });
    const set = await d.req('POST', 'sys/sync/destinations/aws-sm/role/associations/set', {
      mount: 'secret',
      secret_name: 'app/db',
    });
    expect(set.status, set.text).toBe(200);
    expect(set.body.data.store_type).toBe('aws-sm');
    const name = `vault/${accessor}/app/db`;
    await until(
      async () => [await value(name), await statuses('aws-sm', 'role')] as const,
      ([v]) => v === JSON.stringify({ password: 'pw-1', user: 'app' }),
    );
    const assume = sts.stsCalls.filter((c) => c.action === 'AssumeRole');
    expect(assume.length).toBe(1);
    expect(assume[0]).toMatchObject({
      roleArn: ROLE,
      externalId: 'ext-123',
      sessionName: 'keyhold-test',
      accessKeyId: 'testing',
    });
    expect(sts.refusals.SignatureDoesNotMatch ?? 0).toBe(0);
    // Every Secrets Manager call was signed with the session's key (moto's start with ASIA), not the source key.
    expect(sts.smKeys.length).toBeGreaterThan(0);
    expect(sts.smKeys.every((k) => k.startsWith('ASIA'))).toBe(true);
    const desc = await sm.send(new DescribeSecretCommand({ SecretId: name }));
    expect(desc.KmsKeyId).toBe(kmsKeyArn);
    expect((desc.ReplicationStatus ?? []).map((x) => x.Region)).toEqual(['eu-west-1']);
    expect((await statuses('provider-a-sm', 'role')).map((s) => s.sync_status)).toEqual(['SYNCED']);
  });

  it('a destination made under aws-sm is the same one under provider-a-sm; lists group by the id it was created under', async () => {
    const viaNeutral = await d.req('GET', 'sys/sync/destinations/provider-a-sm/role');
    expect(viaNeutral.status).toBe(200);
    expect(viaNeutral.body.data.type).toBe('provider-a-sm');
    expect(viaNeutral.body.data.connection_details.role_arn).toBe(ROLE);
    const list = await d.req('LIST', 'sys/sync/destinations');
    expect(list.body.data.key_info['aws-sm/']).toEqual(['role']);
    expect((await d.req('LIST', 'sys/sync/destinations/aws-sm')).body.data.keys).toEqual(['role']);
    expect((await d.req('LIST', 'sys/sync/destinations/provider-a-sm')).body.data.keys).toEqual(['role']);
    const of = await d.req('GET', `sys/sync/associations/destinations?mount=secret&secret_name=app/db`);
    expect(Object.keys(of.body.data.associated_destinations)).toEqual(['aws-sm/role']);
    const bad = await d.req('GET', 'sys/sync/destinations/aws-kms/role/associations');
    expect(bad.status).toBe(400);
    expect(bad.body.errors.join(' ')).toMatch(/type.*aws-sm/);
  });

  it('a wrong signature is refused by STS and shows CLIENT_SIDE_ERROR naming it', async () => {
    sts.secrets.set('AKIDWRONG', 'the-real-secret');
    const r = await d.req('POST', 'sys/sync/destinations/provider-a-sm/wrongkey', {
      access_key_id: 'AKIDWRONG',
      secret_access_key: 'not-the-secret',
      region: 'us-east-1',
      role_arn: ROLE,
      endpoint_url: sts.url,
      sts_endpoint: sts.url,
      ...net(),
    });
    expect(r.status, r.text).toBe(200);
    await d.req('POST', 'sys/sync/destinations/provider-a-sm/wrongkey/associations/set', {
      mount: 'secret',
      secret_name: 'app/db',
    });
    const recs = await until(
      () => statuses('provider-a-sm', 'wrongkey'),
      (s) => s.some((x) => x.sync_status === 'CLIENT_SIDE_ERROR'),
    );
    expect(recs[0]!.error).toMatch(/AssumeRole.*403.*SignatureDoesNotMatch/);
    await d.req('DELETE', 'sys/sync/destinations/provider-a-sm/wrongkey?force_delete=true');
  });

  it('without keys, AssumeRole is signed with the default credential chain', async () => {
    sts.secrets.set('chainkey', 'chainsecret');
    const before = sts.stsCalls.length;
    const r = await d.req('POST', 'sys/sync/destinations/provider-a-sm/chain', {
      region: 'us-east-1',
      role_arn: ROLE,
      endpoint_url: sts.url,
      sts_endpoint: sts.url,
      secret_name_template: 'chain/{{ .SecretPath }}',
      ...net(),
    });
    expect(r.status, r.text).toBe(200);
    await d.req('POST', 'sys/sync/destinations/provider-a-sm/chain/associations/set', {
      mount: 'secret',
      secret_name: 'app/db',
    });
    await until(
      () => value('chain/app/db'),
      (v) => v !== undefined,
    );
    const calls = sts.stsCalls.slice(before);
    expect(calls.map((c) => [c.action, c.accessKeyId, c.sessionName])).toEqual([
      ['AssumeRole', 'chainkey', 'keyhold-sync-chain'],
    ]);
    await d.req('DELETE', 'sys/sync/destinations/provider-a-sm/chain?purge=true');
    await until(
      () => value('chain/app/db'),
      (v) => v === undefined,
    );
  });

  it('remove deletes a replicated secret (replicas dropped first)', async () => {
    const r = await d.req('POST', 'sys/sync/destinations/aws-sm/role/associations/remove', {
      mount: 'secret',
      secret_name: 'app/db',
    });
    expect(r.status).toBe(200);
    await until(
      async () => [await value(`vault/${accessor}/app/db`), await statuses('aws-sm', 'role')] as const,
      ([v]) => v === undefined,
    );
    await until(
      () => statuses('aws-sm', 'role'),
      (s) => s.length === 0,
    );
  });
});

describe('federation: AssumeRoleWithWebIdentity with keyhold identity tokens', () => {
  it('syncs with no keys at all; STS verified the token against keyhold JWKS, aud, iss and sub', async () => {
    const issuer = `http://127.0.0.1:8200/v1/identity/oidc`;
    sts.trusted = { issuer, jwks, audiences: ['sts.amazonaws.com'], subject: 'keyhold:secret-sync:provider-a-sm:wif' };
    const r = await d.req('POST', 'sys/sync/destinations/provider-a-sm/wif', {
      region: 'us-east-1',
      role_arn: ROLE,
      identity_token_audience: 'sts.amazonaws.com',
      identity_token_ttl: '10m',
      endpoint_url: sts.url,
      sts_endpoint: sts.url,
      ...net(),
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.connection_details.identity_token_ttl).toBe(600);
    sts.smKeys.length = 0;
    await d.req('POST', 'secret/data/app/wif', { data: { token: 't-1' } });
    await d.req('POST', 'sys/sync/destinations/provider-a-sm/wif/associations/set', {
      mount: 'secret',
      secret_name: 'app/wif',
    });
    await until(
      () => value(`vault/${accessor}/app/wif`),
      (v) => v === JSON.stringify({ token: 't-1' }),
    );
    const calls = sts.stsCalls.filter((c) => c.action === 'AssumeRoleWithWebIdentity');
    expect(calls.length).toBe(1);
    expect(calls[0]!.accessKeyId).toBeUndefined();
    const { payload, protectedHeader } = await jwtVerify(calls[0]!.token!, createLocalJWKSet(await jwks()), {
      issuer,
      audience: 'sts.amazonaws.com',
    });
    expect(payload.sub).toBe('keyhold:secret-sync:provider-a-sm:wif');
    expect(payload.exp! - payload.iat!).toBe(600);
    expect(protectedHeader.kid).toBeTruthy();
    expect(sts.smKeys.every((k) => k.startsWith('ASIA'))).toBe(true);
    expect(sts.refusals.InvalidIdentityToken ?? 0).toBe(0);
  });

  it('a trust policy for another subject refuses: CLIENT_SIDE_ERROR naming AccessDenied', async () => {
    sts.trusted = { ...sts.trusted!, subject: 'keyhold:secret-sync:provider-a-sm:someone-else' };
    const r = await d.req('POST', 'sys/sync/destinations/provider-a-sm/wif2', {
      region: 'us-east-1',
      role_arn: ROLE,
      identity_token_audience: 'sts.amazonaws.com',
      endpoint_url: sts.url,
      sts_endpoint: sts.url,
      ...net(),
    });
    expect(r.status, r.text).toBe(200);
    await d.req('POST', 'sys/sync/destinations/provider-a-sm/wif2/associations/set', {
      mount: 'secret',
      secret_name: 'app/wif',
    });
    const recs = await until(
      () => statuses('provider-a-sm', 'wif2'),
      (s) => s.some((x) => x.sync_status === 'CLIENT_SIDE_ERROR'),
    );
    expect(recs[0]!.error).toMatch(/AssumeRoleWithWebIdentity.*403.*AccessDenied/);
    const last = sts.stsCalls.at(-1)!;
    expect(decodeJwt(last.token!).sub).toBe('keyhold:secret-sync:provider-a-sm:wif2');
  });

  it('an identity_token_key that does not exist is a CLIENT_SIDE_ERROR naming it', async () => {
    const r = await d.req('POST', 'sys/sync/destinations/provider-a-sm/nokey', {
      region: 'us-east-1',
      role_arn: ROLE,
      identity_token_audience: 'sts.amazonaws.com',
      identity_token_key: 'missing',
      endpoint_url: sts.url,
      sts_endpoint: sts.url,
      ...net(),
    });
    expect(r.status, r.text).toBe(200);
    await d.req('POST', 'sys/sync/destinations/provider-a-sm/nokey/associations/set', {
      mount: 'secret',
      secret_name: 'app/wif',
    });
    const recs = await until(
      () => statuses('provider-a-sm', 'nokey'),
      (s) => s.some((x) => x.sync_status === 'CLIENT_SIDE_ERROR'),
    );
    expect(recs[0]!.error).toMatch(/no identity\/oidc\/key named "missing" \(identity_token_key\)/);
  });

  it('bad input is a 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ role_arn: 'not-an-arn' }, /role_arn/],
      [{ identity_token_audience: 'sts.amazonaws.com' }, /role_arn.*required/],
      [
        { role_arn: ROLE, identity_token_audience: 'x', access_key_id: 'a', secret_access_key: 'b' },
        /identity_token_audience/,
      ],
      [{ external_id: 'x' }, /external_id/],
      [{ role_arn: ROLE, identity_token_ttl: 5 }, /identity_token_ttl/],
      [{ replica_regions: ['mars-1'] }, /replica_regions/],
      [{ region: 'us-east-1', replica_regions: ['us-east-1'] }, /replica_regions/],
      [{ sts_endpoint: 'ftp://x' }, /sts_endpoint/],
    ];
    for (const [body, re] of cases) {
      const r = await d.req('POST', 'sys/sync/destinations/aws-sm/bad', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors.join(' '), JSON.stringify(body)).toMatch(re);
    }
    expect((await d.req('GET', 'sys/sync/destinations/aws-sm/bad')).status).toBe(404);
  });
});
