/** Destination create/update rules (reference sync-wire.md 1.4-1.5), without HTTP. */
import { afterEach, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { InmemBackend } from '../../../src/storage/inmem.js';
import { SyncStore } from '../../../src/sync/store.js';
import { Syncer } from '../../../src/sync/worker.js';
import { DEFAULT_TUNING } from '../../../src/sync/tuning.js';
import type { KvSource } from '../../../src/sync/kv-source.js';
import { SyncService } from '../../../src/sync/service.js';
import { MASK } from '../../../src/sync/destination-service.js';
import { parseServiceAccount, gcpLabels } from '../../../src/sync/destinations/provider-c-sm.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const kv: KvSource = { mount: () => undefined, readLatest: async () => null, exists: async () => false };
const open: Syncer[] = [];
function service() {
  const store = new SyncStore(new InmemBackend());
  const syncer = new Syncer({
    store,
    kv,
    clock: { now: () => Date.now() },
    logger: silent,
    tuning: DEFAULT_TUNING,
    connect: () => ({ put: async () => {}, remove: async () => {}, close() {} }),
  });
  open.push(syncer);
  return new SyncService(store, syncer, kv, { now: () => Date.now() }, silent);
}
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

const pem = generateKeyPairSync('rsa', { modulusLength: 1024 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
const creds = JSON.stringify({
  type: 'service_account',
  project_id: 'p1',
  client_email: 'a@p1.iam.gserviceaccount.com',
  private_key: pem,
  token_uri: 'https://oauth2.example/token',
});
const azure = {
  key_vault_uri: 'https://v.vault.azure.net',
  client_id: 'c',
  client_secret: 'top-secret',
  tenant_id: 't',
};

describe('destinations', () => {
  it('masks sensitive values and reads options back as granularity_level', async () => {
    const s = service();
    const v = await s.writeDestination(
      'provider-a-sm',
      'a',
      { access_key_id: 'AKIA1', secret_access_key: 'shh', region: 'eu-west-1' },
      'post',
    );
    expect(v.connection_details).toEqual({
      access_key_id: MASK,
      secret_access_key: MASK,
      region: 'eu-west-1',
      endpoint_url: '',
      // Role assumption, federation, KMS and replicas (issue 31): unset, with Vault's one-hour token TTL.
      role_arn: '',
      external_id: '',
      role_session_name: '',
      sts_endpoint: '',
      identity_token_audience: '',
      identity_token_ttl: 3600,
      identity_token_key: '',
      kms_key_id: '',
      replica_regions: [],
    });
    expect(v.options).toMatchObject({
      granularity_level: 'secret-path',
      secret_name_template: 'vault/{{ .MountAccessor }}/{{ .SecretPath }}',
      custom_tags: {},
    });
    expect(JSON.stringify(v)).not.toContain('shh');
    const empty = await s.writeDestination('provider-a-sm', 'b', {}, 'post');
    expect(empty.connection_details).toMatchObject({ access_key_id: '', secret_access_key: '' });
  });

  it('uses secret-key granularity by default for repohost and hosting-project', async () => {
    const s = service();
    const gh = await s.writeDestination(
      'repohost',
      'g',
      { access_token: 't', repository_owner: 'o', repository_name: 'r' },
      'post',
    );
    expect((gh.options as Record<string, unknown>).granularity_level).toBe('secret-key');
    const vc = await s.writeDestination(
      'hosting-project',
      'v',
      { access_token: 't', project_id: 'p', deployment_environments: ['preview', 'production', 'preview'] },
      'post',
    );
    expect((vc.connection_details as Record<string, unknown>).deployment_environments).toEqual([
      'preview',
      'production',
    ]);
  });

  it('requires the fields of the spec table on create, naming the field', async () => {
    const s = service();
    await expect(
      s.writeDestination('provider-b-kv', 'z', { ...azure, client_secret: undefined }, 'post'),
    ).rejects.toThrow('client_secret: is required');
    await expect(
      s.writeDestination('repohost', 'g', { access_token: 't', repository_owner: 'o' }, 'post'),
    ).rejects.toThrow('repository_name: is required');
    await expect(
      s.writeDestination(
        'hosting-project',
        'v',
        { access_token: 't', project_id: 'p', deployment_environments: ['staging'] },
        'post',
      ),
    ).rejects.toThrow(/deployment_environments: must be among/);
    await expect(s.writeDestination('provider-c-sm', 'c', {}, 'post')).rejects.toThrow('credentials: is required');
  });

  it('merges updates: omitted fields keep their stored values', async () => {
    const s = service();
    await s.writeDestination('provider-b-kv', 'z', azure, 'post');
    const v = await s.writeDestination('provider-b-kv', 'z', { client_id: 'c2' }, 'patch');
    expect(v.connection_details).toMatchObject({
      client_id: 'c2',
      client_secret: MASK,
      key_vault_uri: azure.key_vault_uri,
    });
  });

  it('refuses changes to fields fixed at creation, but accepts the same value', async () => {
    const s = service();
    await s.writeDestination('provider-b-kv', 'z', azure, 'post');
    await expect(s.writeDestination('provider-b-kv', 'z', { tenant_id: 'other' }, 'post')).rejects.toThrow(
      'tenant_id: cannot be changed after the destination is created',
    );
    await expect(
      s.writeDestination('provider-b-kv', 'z', { key_vault_uri: 'https://w.vault.azure.net' }, 'patch'),
    ).rejects.toThrow(/key_vault_uri: cannot be changed/);
    await expect(s.writeDestination('provider-b-kv', 'z', { tenant_id: 't' }, 'post')).resolves.toBeTruthy();
    await s.writeDestination('provider-a-sm', 'a', { region: 'us-east-1' }, 'post');
    await expect(s.writeDestination('provider-a-sm', 'a', { region: 'eu-west-1' }, 'post')).rejects.toThrow(
      /region: cannot be changed/,
    );
  });

  it('PATCH on a missing destination is 404', async () => {
    await expect(service().writeDestination('provider-a-sm', 'nope', {}, 'patch')).rejects.toMatchObject({
      status: 404,
    });
  });

  it('refuses custom_tags where the provider has no tags, bad granularity templates, bad URLs and names', async () => {
    const s = service();
    await expect(
      s.writeDestination(
        'repohost',
        'g',
        { access_token: 't', repository_owner: 'o', repository_name: 'r', custom_tags: { a: 'b' } },
        'post',
      ),
    ).rejects.toThrow('custom_tags: is not supported by repohost');
    await expect(
      s.writeDestination(
        'provider-a-sm',
        'a',
        { granularity: 'secret-key', secret_name_template: '{{ .SecretPath }}' },
        'post',
      ),
    ).rejects.toThrow(/should contain reference to the secret key/);
    await expect(
      s.writeDestination('provider-a-sm', 'a', { endpoint_url: 'file:///etc/passwd' }, 'post'),
    ).rejects.toThrow('endpoint_url: must be an absolute http(s) URL');
    await expect(s.writeDestination('provider-a-sm', 'a/b', {}, 'post')).rejects.toThrow(/^name:/);
    await expect(s.writeDestination('provider-a-sm', 'a', { access_key_id: 'AKIA' }, 'post')).rejects.toThrow(
      /given together/,
    );
  });

  it('switching granularity re-checks the stored custom template', async () => {
    const s = service();
    await s.writeDestination('provider-a-sm', 'a', { secret_name_template: 'x/{{ .SecretPath }}' }, 'post');
    await expect(s.writeDestination('provider-a-sm', 'a', { granularity: 'secret-key' }, 'post')).rejects.toThrow(
      /secret key/,
    );
    const v = await s.writeDestination(
      'provider-a-sm',
      'a',
      { granularity: 'secret-key', secret_name_template: '' },
      'post',
    );
    expect((v.options as Record<string, unknown>).secret_name_template).toBe(
      'vault/{{ .MountAccessor }}/{{ .SecretPath }}/{{ .SecretKey }}',
    );
  });

  it('provider-c-sm: parses the service account, masks it, needs a project', async () => {
    const s = service();
    const v = await s.writeDestination('provider-c-sm', 'c', { credentials: creds }, 'post');
    expect((v.connection_details as Record<string, unknown>).credentials).toBe(MASK);
    await expect(
      s.writeDestination('provider-c-sm', 'c2', { credentials: '{"client_email":"x@y"' }, 'post'),
    ).rejects.toThrow('credentials: failed to parse credentials: not valid JSON');
    await expect(
      s.writeDestination('provider-c-sm', 'c3', { credentials: '@/etc/creds.json' }, 'post'),
    ).rejects.toThrow(/read by the CLI/);
    const noProject = JSON.stringify({ ...JSON.parse(creds), project_id: undefined });
    await expect(s.writeDestination('provider-c-sm', 'c4', { credentials: noProject }, 'post')).rejects.toThrow(
      'project_id: is required when the credentials carry no project_id',
    );
    expect(parseServiceAccount(JSON.stringify({ client_email: 'a@b', private_key: pem })).token_uri).toBe(
      'https://oauth2.googleapis.com/token',
    );
  });

  it('never echoes a malformed private key in the error', () => {
    const bad = JSON.stringify({
      client_email: 'a@b',
      private_key: '-----BEGIN PRIVATE KEY-----\nSECRETMATERIAL\n-----END PRIVATE KEY-----',
    });
    expect(() => parseServiceAccount(bad)).toThrow(/private_key is not an RSA private key/);
    try {
      parseServiceAccount(bad);
    } catch (e) {
      expect((e as Error).message).not.toContain('SECRETMATERIAL');
    }
  });

  it('normalizes tags into Google label rules', () => {
    expect(gcpLabels({ 'hashicorp:vault': '', Team: 'Payments/EU', '9x': 'v' })).toEqual({
      hashicorp_vault: '',
      team: 'payments_eu',
      k9x: 'v',
    });
  });

  it('lists destinations grouped by type with a total, and by type', async () => {
    const s = service();
    expect(await s.listDestinations()).toBeNull();
    await s.writeDestination('provider-a-sm', 'a', {}, 'post');
    await s.writeDestination('provider-a-sm', 'b', {}, 'post');
    await s.writeDestination('provider-b-kv', 'z', azure, 'post');
    expect(await s.listDestinations()).toEqual({
      keys: ['provider-a-sm/', 'provider-b-kv/'],
      key_info: { 'provider-a-sm/': ['a', 'b'], 'provider-b-kv/': ['z'] },
      total_destinations: 3,
    });
    expect(await s.listDestinationsOfType('provider-a-sm')).toEqual({ keys: ['a', 'b'], total_destinations: 2 });
  });

  it('delete without associations removes the destination; delete of a missing one is a no-op', async () => {
    const s = service();
    await s.writeDestination('provider-a-sm', 'a', {}, 'post');
    expect(await s.deleteDestination('provider-a-sm', 'a', { purge: false, force: false })).toBeNull();
    expect(await s.readDestination('provider-a-sm', 'a')).toBeNull();
    expect(await s.deleteDestination('provider-a-sm', 'a', { purge: false, force: false })).toBeNull();
  });

  it('sys/sync/config: defaults, merge, reset', async () => {
    const s = service();
    expect(await s.config()).toEqual({ disabled: false, queue_capacity: 1_000_000 });
    expect(await s.updateConfig({ disabled: true })).toEqual({ disabled: true, queue_capacity: 1_000_000 });
    expect(await s.updateConfig({ queue_capacity: 5 })).toEqual({ disabled: true, queue_capacity: 5 });
    await s.resetConfig();
    expect(await s.config()).toEqual({ disabled: false, queue_capacity: 1_000_000 });
  });
});
