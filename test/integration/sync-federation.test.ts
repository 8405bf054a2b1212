/**
 * Azure and Google destinations without static keys (issue 31 part 3), against strict fakes that
 * verify keyhold's identity token as the real token endpoints do: its signature with keyhold's JWKS
 * (GET /v1/identity/oidc/.well-known/keys), `iss`, `aud`, `sub` and expiry, and refuse otherwise.
 * - provider-b-kv (azure-kv): the token as `client_assertion` on the Entra ID token endpoint.
 * - provider-c-sm (gcp-sm): Google STS token exchange, then IAM Credentials impersonation of a
 *   service account (or the federated token used directly); replication locations and a
 *   customer-managed key on the secrets created.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { startHarness, cleanup, type Harness } from '../support/harness.js';
import { AzureFake } from '../fakes/azure.js';
import { GoogleFake } from '../fakes/google.js';
import { until } from '../fakes/wait.js';

let d: Harness;
const az = new AzureFake();
const gcp = new GoogleFake();
let issuer = '';
let accessor = '';
const jwks = async () => (await d.req('GET', 'identity/oidc/.well-known/keys', undefined, { token: null })).body;
const loopback = (port: number) => ({ allowed_ipv4_addresses: ['127.0.0.1/32'], allowed_ports: [port] });
const records = async (type: string, name: string) =>
  Object.values(
    ((await d.req('GET', `sys/sync/destinations/${type}/${name}/associations`)).body?.data?.associated_secrets ??
      {}) as Record<string, { sync_status: string; error?: string }>,
  );
const POOL = '//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/keyhold/providers/keyhold';

beforeAll(async () => {
  await Promise.all([az.start(), gcp.start()]);
  d = await startHarness({
    env: { KEYHOLD_SYNC_RETRY_BASE_MS: '100', KEYHOLD_SYNC_RETRY_MAX_MS: '400', KEYHOLD_SYNC_TIMEOUT_MS: '2000' },
  });
  issuer = (await d.req('GET', 'identity/oidc/.well-known/openid-configuration', undefined, { token: null })).body
    .issuer;
  accessor = (await d.req('GET', 'sys/mounts')).body.data['secret/'].accessor;
  await d.req('POST', 'secret/data/fed/app', { data: { api_key: 'k-1' } });
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
  await Promise.all([az.stop(), gcp.stop()]);
});

describe('azure-kv with a federated credential (client assertion)', () => {
  const azure = (extra: Record<string, unknown> = {}) => ({
    key_vault_uri: az.url,
    client_id: az.clientId,
    tenant_id: az.tenant,
    authority_host: az.url,
    identity_token_audience: 'api://AzureADTokenExchange',
    ...loopback(az.server.port),
    ...extra,
  });

  it('gets its token with keyhold identity token, no client secret, and syncs', async () => {
    az.federated = {
      issuer,
      subject: 'keyhold:secret-sync:provider-b-kv:azfed',
      audience: 'api://AzureADTokenExchange',
      jwks,
    };
    const c = await d.req('POST', 'sys/sync/destinations/azure-kv/azfed', azure({ identity_token_ttl: 300 }));
    expect(c.status, c.text).toBe(200);
    expect(c.body.data.type).toBe('azure-kv');
    expect(c.body.data.connection_details.client_secret).toBe('');
    await d.req('POST', 'sys/sync/destinations/azure-kv/azfed/associations/set', {
      mount: 'secret',
      secret_name: 'fed/app',
    });
    const name = `vault-${accessor}-fed-app`.replace(/[^0-9A-Za-z-]/g, '-');
    await until(
      () => az.valueOf(name),
      (v) => v === JSON.stringify({ api_key: 'k-1' }),
    );
    expect(az.assertions.length).toBe(1);
    const { payload } = await jwtVerify(az.assertions[0]!, createLocalJWKSet(await jwks()), {
      issuer,
      audience: 'api://AzureADTokenExchange',
    });
    expect(payload.sub).toBe('keyhold:secret-sync:provider-b-kv:azfed');
    expect(payload.exp! - payload.iat!).toBe(300);
    expect((await records('provider-b-kv', 'azfed')).map((r) => r.sync_status)).toEqual(['SYNCED']);
  });

  it('a federated credential for another subject refuses: CLIENT_SIDE_ERROR with AADSTS70021', async () => {
    const c = await d.req('POST', 'sys/sync/destinations/provider-b-kv/azother', azure());
    expect(c.status, c.text).toBe(200);
    await d.req('POST', 'sys/sync/destinations/provider-b-kv/azother/associations/set', {
      mount: 'secret',
      secret_name: 'fed/app',
    });
    const rs = await until(
      () => records('provider-b-kv', 'azother'),
      (r) => r.some((x) => x.sync_status === 'CLIENT_SIDE_ERROR'),
    );
    expect(rs[0]!.error).toMatch(/token: HTTP 401 invalid_client/);
    expect(decodeJwt(az.assertions.at(-1)!).sub).toBe('keyhold:secret-sync:provider-b-kv:azother');
    await d.req('DELETE', 'sys/sync/destinations/provider-b-kv/azother?force_delete=true');
  });

  it('after the signing key rotates, new assertions carry the new key and still verify', async () => {
    const before = decodeProtectedHeader(az.assertions[0]!).kid;
    expect((await d.req('POST', 'identity/oidc/key/default/rotate', {})).status).toBeLessThan(300);
    // A changed destination gets a new connector, hence a new token request.
    await d.req(
      'PATCH',
      'sys/sync/destinations/azure-kv/azfed',
      { identity_token_ttl: 600 },
      { headers: { 'Content-Type': 'application/merge-patch+json' } },
    );
    await d.req('POST', 'secret/data/fed/app', { data: { api_key: 'k-2' } });
    await until(
      () => az.valueOf(`vault-${accessor}-fed-app`.replace(/[^0-9A-Za-z-]/g, '-')),
      (v) => v === JSON.stringify({ api_key: 'k-2' }),
    );
    const last = az.assertions.at(-1)!;
    expect(decodeProtectedHeader(last).kid).not.toBe(before);
    await jwtVerify(last, createLocalJWKSet(await jwks()), { issuer, audience: 'api://AzureADTokenExchange' });
  });

  it('bad input is a 400 naming the field', async () => {
    for (const [body, re] of [
      [azure({ client_secret: 's' }), /client_secret.*not both/],
      [azure({ identity_token_audience: '' }), /client_secret.*required/],
      [azure({ identity_token_key: 'no spaces allowed' }), /identity_token_key/],
    ] as const) {
      const r = await d.req('POST', 'sys/sync/destinations/azure-kv/bad', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors.join(' ')).toMatch(re);
    }
  });
});

describe('gcp-sm with workload identity federation', () => {
  const google = (extra: Record<string, unknown> = {}) => ({
    project_id: gcp.project,
    identity_token_audience: POOL,
    sts_endpoint: gcp.url,
    iam_credentials_endpoint: gcp.url,
    endpoint_url: gcp.url,
    ...loopback(gcp.server.port),
    ...extra,
  });

  it('exchanges the identity token at STS, impersonates the service account, and creates secrets with the replication locations and the key', async () => {
    gcp.federation = {
      issuer,
      audience: POOL,
      subject: 'keyhold:secret-sync:provider-c-sm:gfed',
      jwks,
      serviceAccount: gcp.clientEmail,
      directAccess: false,
    };
    const key = `projects/${gcp.project}/locations/us-central1/keyRings/sync/cryptoKeys/secrets`;
    const c = await d.req(
      'POST',
      'sys/sync/destinations/gcp-sm/gfed',
      google({ service_account_email: gcp.clientEmail, replication_locations: ['us-central1'], kms_key_name: key }),
    );
    expect(c.status, c.text).toBe(200);
    await d.req('POST', 'sys/sync/destinations/gcp-sm/gfed/associations/set', {
      mount: 'secret',
      secret_name: 'fed/app',
    });
    const id = `vault_${accessor}_fed_app`.replace(/[^A-Za-z0-9_-]/g, '_');
    await until(
      () => gcp.valueOf(id),
      (v) => v !== undefined,
    );
    expect(gcp.impersonations).toBe(1);
    expect(gcp.secrets.get(id)!.replication).toEqual({
      userManaged: { replicas: [{ location: 'us-central1', customerManagedEncryption: { kmsKeyName: key } }] },
    });
    const { payload } = await jwtVerify(gcp.subjectTokens[0]!, createLocalJWKSet(await jwks()), {
      issuer,
      audience: POOL,
    });
    expect(payload.sub).toBe('keyhold:secret-sync:provider-c-sm:gfed');
    expect(gcp.tokensIssued).toBe(0); // no service-account key was used
  });

  it('without a service account the federated token is used directly (replica_regions alias, automatic CMEK)', async () => {
    gcp.federation = { ...gcp.federation!, subject: 'keyhold:secret-sync:provider-c-sm:gdirect', directAccess: true };
    const c = await d.req(
      'POST',
      'sys/sync/destinations/provider-c-sm/gdirect',
      google({ secret_name_template: 'direct_{{ .SecretPath }}', replica_regions: ['europe-west4'] }),
    );
    expect(c.status, c.text).toBe(200);
    await d.req('POST', 'sys/sync/destinations/provider-c-sm/gdirect/associations/set', {
      mount: 'secret',
      secret_name: 'fed/app',
    });
    await until(
      () => gcp.valueOf('direct_fed_app'),
      (v) => v !== undefined,
    );
    expect(gcp.impersonations).toBe(1);
    expect(gcp.secrets.get('direct_fed_app')!.replication).toEqual({
      userManaged: { replicas: [{ location: 'europe-west4' }] },
    });
  });

  it('an attribute condition for another subject, or a service account not granted, is a CLIENT_SIDE_ERROR', async () => {
    gcp.federation = { ...gcp.federation!, subject: 'keyhold:secret-sync:provider-c-sm:someone', directAccess: false };
    await d.req(
      'POST',
      'sys/sync/destinations/gcp-sm/gwrong',
      google({ service_account_email: gcp.clientEmail, secret_name_template: 'wrong_{{ .SecretPath }}' }),
    );
    await d.req('POST', 'sys/sync/destinations/gcp-sm/gwrong/associations/set', {
      mount: 'secret',
      secret_name: 'fed/app',
    });
    let rs = await until(
      () => records('gcp-sm', 'gwrong'),
      (r) => r.some((x) => x.sync_status === 'CLIENT_SIDE_ERROR'),
    );
    expect(rs[0]!.error).toMatch(
      /STS token exchange: HTTP 400 invalid_grant The given credential is rejected by the attribute condition/,
    );
    gcp.federation = { ...gcp.federation!, subject: 'keyhold:secret-sync:provider-c-sm:gnosa' };
    await d.req(
      'POST',
      'sys/sync/destinations/gcp-sm/gnosa',
      google({
        service_account_email: 'other@x.iam.gserviceaccount.com',
        secret_name_template: 'nosa_{{ .SecretPath }}',
      }),
    );
    await d.req('POST', 'sys/sync/destinations/gcp-sm/gnosa/associations/set', {
      mount: 'secret',
      secret_name: 'fed/app',
    });
    rs = await until(
      () => records('gcp-sm', 'gnosa'),
      (r) => r.some((x) => x.sync_status === 'CLIENT_SIDE_ERROR'),
    );
    expect(rs[0]!.error).toMatch(/generateAccessToken: HTTP 403 PERMISSION_DENIED/);
  });

  it('bad input is a 400 naming the field', async () => {
    for (const [body, re] of [
      [google({ identity_token_audience: 'https://example.com' }), /identity_token_audience/],
      [google({ project_id: '' }), /project_id/],
      [google({ credentials: gcp.credentials() }), /credentials.*not both/],
      [
        google({
          replication_locations: ['us-central1', 'europe-west4'],
          kms_key_name: 'projects/p/locations/us-central1/keyRings/r/cryptoKeys/k',
        }),
        /kms_key_name/,
      ],
      [google({ replication_locations: ['Not A Location'] }), /replication_locations/],
      [{ project_id: 'p' }, /credentials.*required/],
    ] as const) {
      const r = await d.req('POST', 'sys/sync/destinations/gcp-sm/bad', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors.join(' ')).toMatch(re);
    }
  });
});
