/**
 * terraform-provider-vault's version gate against keyhold (issue 31 part 1), with the requests the
 * provider sends (read from its source, hashicorp/terraform-provider-vault: internal/provider/meta.go
 * getVaultVersion, internal/sync/secrets_sync.go, vault/resource_secrets_sync_*.go):
 * - the version: GET /v1/sys/seal-status, `version` parsed as a semantic version (go-version's
 *   NewSemver); `vault_secrets_sync_*` create refuses below 1.16.0 ("feature not enabled");
 * - a destination: PUT /v1/sys/sync/destinations/<vault type id>/<name> with the resource's write
 *   fields for that version (network fields from 1.19.0, identity_token_* from 2.0.0, kms_key_id and
 *   replica_regions from 2.2.0), then GET and the read fields from connection_details and options
 *   (granularity as granularity_level), identity_token_ttl read as an integer;
 * - an association: PUT .../associations/set {secret_name, mount}, its record read from
 *   associated_secrets["<accessor>/<destination name>"] (sic: the provider's key), then
 *   PUT .../associations/remove and DELETE of the destination.
 * The daemon runs with KEYHOLD_REPORTED_VAULT_VERSION over a config file's reported_vault_version.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, cleanup, type Answer, type Daemon } from '../support/daemon.js';
import { startHarness, type Harness } from '../support/harness.js';

/** go-version's NewSemver, as far as the gate needs it: [major, minor, patch, prerelease]. */
function semver(v: string): [number, number, number, string] {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(v);
  if (!m) throw new Error(`Malformed version: ${v}`); // the provider panics here (version.Must)
  return [Number(m[1]), Number(m[2]), Number(m[3]), m[4] ?? ''];
}
function atLeast(v: string, min: string): boolean {
  const a = semver(v);
  const b = semver(min);
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] as number) > (b[i] as number);
  // A prerelease is lower than its release.
  return a[3] === b[3] || a[3] === '' || (b[3] !== '' && a[3] > b[3]);
}

/** The provider's write and read fields of vault_secrets_sync_aws_destination for a server version. */
function awsFields(version: string): { write: string[]; read: string[] } {
  const write = [
    'access_key_id',
    'secret_access_key',
    'granularity',
    'region',
    'custom_tags',
    'secret_name_template',
    'role_arn',
    'external_id',
  ];
  const read = ['region', 'custom_tags', 'granularity', 'secret_name_template', 'role_arn', 'external_id'];
  if (atLeast(version, '1.19.0')) {
    const net = ['allowed_ipv4_addresses', 'allowed_ipv6_addresses', 'allowed_ports', 'disable_strict_networking'];
    write.push(...net);
    read.push(...net);
  }
  if (atLeast(version, '2.0.0')) {
    write.push('identity_token_audience', 'identity_token_ttl', 'identity_token_key');
    read.push('identity_token_ttl');
  }
  if (atLeast(version, '2.2.0')) {
    write.push('kms_key_id', 'replica_regions');
    read.push('kms_key_id', 'replica_regions');
  }
  return { write, read };
}

type Req = (method: string, path: string, body?: unknown) => Promise<Answer>;

/** What the provider does for `terraform apply` of a destination, an association, then `destroy`. */
async function applyAws(
  req: Req,
  name: string,
  config: Record<string, unknown>,
): Promise<{ version: string; state: Record<string, unknown>; association: Record<string, unknown> }> {
  const seal = await req('GET', 'sys/seal-status');
  const version = seal.body.version as string;
  if (!atLeast(version, '1.16.0'))
    throw new Error(
      `feature not enabled on current Vault version. min version required=1.16.0; current vault version=${version}`,
    );
  const { write, read } = awsFields(version);
  const data: Record<string, unknown> = {};
  for (const k of write) if (config[k] !== undefined) data[k] = config[k];
  const path = `sys/sync/destinations/aws-sm/${name}`;
  const w = await req('PUT', path, data);
  if (w.status >= 400) throw new Error(`error writing sync destination data to "${path}": ${w.text}`);
  const r = await req('GET', path);
  const state: Record<string, unknown> = {};
  const conn = r.body.data.connection_details as Record<string, unknown>;
  const opts = r.body.data.options as Record<string, unknown>;
  for (const k of read) {
    const key = k === 'granularity' ? 'granularity_level' : k;
    if (key in conn) state[k] = conn[key];
    if (key in opts) state[k] = opts[key];
  }
  const accessor = (await req('GET', 'sys/mounts')).body.data['secret/'].accessor as string;
  const a = await req('PUT', `${path}/associations/set`, { secret_name: 'tf/app', mount: 'secret' });
  if (a.status >= 400) throw new Error(a.text);
  const assoc = (a.body.data.associated_secrets as Record<string, Record<string, unknown>>)[`${accessor}/tf/app`] ?? {};
  const association = Object.fromEntries(
    ['secret_name', 'sync_status', 'accessor', 'updated_at'].filter((k) => k in assoc).map((k) => [k, assoc[k]]),
  );
  const rm = await req('PUT', `${path}/associations/remove`, { secret_name: 'tf/app', mount: 'secret' });
  if (rm.status >= 400) throw new Error(rm.text);
  const del = await req('DELETE', path);
  if (del.status >= 400) throw new Error(del.text);
  return { version, state, association };
}

const config = {
  region: 'us-east-1',
  role_arn: 'arn:aws:iam::123456789012:role/keyhold-sync',
  granularity: 'secret-path',
  custom_tags: { team: 'platform' },
  secret_name_template: 'vault/{{ .MountAccessor }}/{{ .SecretPath }}',
  allowed_ipv4_addresses: ['10.0.0.0/8'],
  allowed_ipv6_addresses: [],
  allowed_ports: [443],
  disable_strict_networking: false,
  identity_token_audience: 'sts.amazonaws.com',
  identity_token_ttl: 900,
  identity_token_key: 'default',
  kms_key_id: 'alias/keyhold',
  replica_regions: ['eu-west-1'],
};

let d: Daemon;
let h: Harness;
let cfgDir = '';
beforeAll(async () => {
  cfgDir = mkdtempSync(join(tmpdir(), 'keyhold-tf-'));
  const cfg = join(cfgDir, 'server.hcl');
  writeFileSync(cfg, 'reported_vault_version = "1.19.0"\n');
  // The environment variable wins over the file (as VAULT_API_ADDR over api_addr).
  d = await startDaemon({ args: ['--config', cfg], env: { KEYHOLD_REPORTED_VAULT_VERSION: '2.2.0' } });
  await d.req('POST', 'secret/data/tf/app', { data: { a: '1' } });
  h = await startHarness();
  await h.req('POST', 'secret/data/tf/app', { data: { a: '1' } });
}, 60_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
  await h?.stop();
  if (h) cleanup(h.dir);
  if (cfgDir) cleanup(cfgDir);
});

describe('reported_vault_version and the provider version gate', () => {
  it('seal-status and health report the configured version; keyhold keeps its own as keyhold_version', async () => {
    const seal = await d.req('GET', 'sys/seal-status', undefined, { token: null });
    expect(seal.body.version).toBe('2.2.0');
    expect(seal.body.keyhold_version).toMatch(/^\d+\.\d+\.\d+/);
    expect(seal.body.keyhold_version).not.toBe('2.2.0');
    const health = await d.req('GET', 'sys/health', undefined, { token: null });
    expect(health.body.version).toBe('2.2.0');
    expect(health.body.keyhold_version).toBe(seal.body.keyhold_version);
  });

  it('at 2.2.0 every field the provider sends is accepted and read back unchanged (no drift); identity_token_ttl is an integer', async () => {
    const req: Req = (m, p, b) => d.req(m, p, b);
    const { version, state, association } = await applyAws(req, 'tf', config);
    expect(version).toBe('2.2.0');
    const { read } = awsFields(version);
    for (const k of read) expect(state[k], k).toEqual((config as Record<string, unknown>)[k] ?? '');
    expect(Number.isInteger(state.identity_token_ttl)).toBe(true);
    expect(association).toMatchObject({ secret_name: 'tf/app', accessor: expect.stringMatching(/^kv_/) });
    expect(String(association.sync_status)).toMatch(
      /^(PENDING|SYNCING|SYNCED|CLIENT_SIDE_ERROR|EXTERNAL_SERVICE_ERROR|UNKNOWN)$/,
    );
  });

  it('at 1.16.0 the provider sends only the base fields, which keyhold takes as well', async () => {
    const req: Req = async (m, p, b) => {
      const r = await d.req(m, p, b);
      return p === 'sys/seal-status' ? { ...r, body: { ...r.body, version: '1.16.0' } } : r;
    };
    const { state } = await applyAws(req, 'tf116', {
      ...config,
      access_key_id: 'AKID',
      secret_access_key: 'secret',
      identity_token_audience: undefined,
    });
    expect(Object.keys(state).sort()).toEqual([
      'custom_tags',
      'external_id',
      'granularity',
      'region',
      'role_arn',
      'secret_name_template',
    ]);
  });

  it("without the setting keyhold reports its own version and the provider's gate refuses", async () => {
    const seal = await h.req('GET', 'sys/seal-status', undefined, { token: null });
    expect(seal.body.keyhold_version).toBeUndefined();
    await expect(applyAws((m, p, b) => h.req(m, p, b), 'tf', config)).rejects.toThrow(
      /feature not enabled on current Vault version/,
    );
  });
});
