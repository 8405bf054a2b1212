/** The sys/sync HTTP API and the `keyhold sync` CLI against the real daemon, with the Vercel fake as destination. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, cleanup, type Daemon } from '../support/daemon.js';
import { VercelFake } from '../fakes/vercel.js';
import { until } from '../fakes/wait.js';

let d: Daemon;
let vc: VercelFake;

function vercelBody(extra: Record<string, unknown> = {}) {
  return {
    access_token: vc.token,
    project_id: vc.projectId,
    team_id: vc.teamId,
    deployment_environments: 'preview,production',
    endpoint_url: vc.url,
    allowed_ipv4_addresses: ['127.0.0.1/32'],
    allowed_ports: [vc.server.port],
    ...extra,
  };
}

const assocOf = async (name: string) =>
  (await d.req('GET', `sys/sync/destinations/hosting-project/${name}/associations`)).body?.data?.associated_secrets ??
  {};

beforeAll(async () => {
  vc = await new VercelFake().start();
  d = await startDaemon({ env: { KEYHOLD_SYNC_RETRY_BASE_MS: '50', KEYHOLD_SYNC_RETRY_MAX_MS: '200' } });
});
afterAll(async () => {
  await d?.kill();
  if (d) cleanup(d.dir);
  await vc?.stop();
});

describe('sys/sync destinations', () => {
  it('creates a destination and reads it back masked, options as granularity_level', async () => {
    const r = await d.req('POST', 'sys/sync/destinations/hosting-project/web', vercelBody());
    expect(r.status).toBe(200);
    expect(r.text).not.toContain(vc.token);
    const g = await d.req('GET', 'sys/sync/destinations/hosting-project/web');
    expect(g.body.data).toMatchObject({
      name: 'web',
      type: 'hosting-project',
      connection_details: {
        access_token: '*****',
        project_id: vc.projectId,
        team_id: vc.teamId,
        deployment_environments: ['preview', 'production'],
      },
      options: {
        granularity_level: 'secret-key',
        custom_tags: {},
        allowed_ports: [vc.server.port],
        disable_strict_networking: false,
      },
    });
    expect(g.text).not.toContain(vc.token);
  });

  it('lists destinations grouped by type (LIST verb and ?list=true)', async () => {
    const l = await d.req('LIST', 'sys/sync/destinations');
    expect(l.body.data).toMatchObject({
      keys: ['hosting-project/'],
      key_info: { 'hosting-project/': ['web'] },
      total_destinations: 1,
    });
    const q = await d.req('GET', 'sys/sync/destinations/hosting-project?list=true');
    expect(q.body.data).toEqual({ keys: ['web'], total_destinations: 1 });
    expect((await d.req('LIST', 'sys/sync/destinations/repohost')).status).toBe(404);
  });

  it('PATCH needs merge-patch JSON, merges, and refuses fields fixed at creation', async () => {
    const bad = await d.req('PATCH', 'sys/sync/destinations/hosting-project/web', { team_id: 'x' });
    expect(bad.status).toBe(415);
    const ok = await d.req(
      'PATCH',
      'sys/sync/destinations/hosting-project/web',
      { deployment_environments: ['production', 'preview'] },
      { headers: { 'Content-Type': 'application/merge-patch+json' } },
    );
    expect(ok.status).toBe(200);
    expect(ok.body.data.connection_details.access_token).toBe('*****');
    const fixed = await d.req('POST', 'sys/sync/destinations/hosting-project/web', { project_id: 'prj_other' });
    expect(fixed.status).toBe(400);
    expect(fixed.body.errors[0]).toBe(
      'project_id: cannot be changed after the destination is created; create a new destination instead',
    );
    const missing = await d.req(
      'PATCH',
      'sys/sync/destinations/hosting-project/nope',
      { team_id: 'x' },
      { headers: { 'Content-Type': 'application/merge-patch+json' } },
    );
    expect(missing.status).toBe(404);
  });

  it('answers 400 naming the field for bad input, never 500', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['hosting-project/x', { access_token: 't', project_id: 'p' }, /^deployment_environments: is required/],
      [
        'hosting-project/x',
        vercelBody({ granularity: 'per-key' }),
        /^granularity: must be one of secret-path, secret-key/,
      ],
      ['hosting-project/x', vercelBody({ allowed_ports: ['http'] }), /^allowed_ports\[0\]: expected an integer/],
      [
        'hosting-project/x',
        vercelBody({ allowed_ipv4_addresses: ['10.0.0.0/40'] }),
        /^allowed_ipv4_addresses: invalid CIDR address/,
      ],
      [
        'hosting-project/x',
        vercelBody({ secret_name_template: '{{ .SecretPath }}' }),
        /should contain reference to the secret key/,
      ],
      ['hosting-project/x', vercelBody({ secret_name_template: '{{.InvalidTemplate}}' }), /unknown field/],
      [
        'provider-b-kv/x',
        { key_vault_uri: 'not a url', client_id: 'c', client_secret: 's', tenant_id: 't' },
        /^key_vault_uri: must be an absolute/,
      ],
      ['provider-c-sm/x', { credentials: '{"nope": true}' }, /^credentials: failed to parse credentials/],
      ['no-such-type/x', {}, /^type: unknown destination type "no-such-type"/],
    ];
    for (const [p, body, re] of cases) {
      const r = await d.req('POST', `sys/sync/destinations/${p}`, body);
      expect(r.status, p + JSON.stringify(body)).toBe(400);
      expect(r.body.errors[0]).toMatch(re);
    }
  });

  it('warns about fields that do not belong to the type', async () => {
    const r = await d.req('POST', 'sys/sync/destinations/hosting-project/web', { client_id: 'x' });
    expect(r.status).toBe(200);
    expect(r.body.warnings.join(' ')).toMatch(/unrecognized parameters: \[client_id\]/);
  });
});

describe('sys/sync associations', () => {
  beforeAll(async () => {
    expect(
      (await d.req('POST', 'secret/data/app/web', { data: { API_KEY: 'k1', DB_URL: 'postgres://x' } })).status,
    ).toBe(200);
  });

  it('set syncs each key (secret-key) with records per sub-key', async () => {
    const r = await d.req('POST', 'sys/sync/destinations/hosting-project/web/associations/set', {
      mount: 'secret',
      secret_name: 'app/web',
    });
    expect(r.status).toBe(200);
    const recs = r.body.data.associated_secrets;
    const keys = Object.keys(recs).sort();
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^kv_[0-9a-f]{8}\/app\/web\/API_KEY$/);
    expect(recs[keys[0]!]).toMatchObject({
      mount: 'secret',
      secret_name: 'app/web',
      sub_key: 'API_KEY',
      sync_status: 'SYNCED',
    });
    expect(recs[keys[0]!].updated_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    const acc = recs[keys[0]!].accessor as string;
    expect(vc.valueOf(`VAULT_${acc.toUpperCase()}_APP_WEB_API_KEY`)).toBe('k1');
    expect(vc.targetsOf(`VAULT_${acc.toUpperCase()}_APP_WEB_DB_URL`)?.sort()).toEqual(['preview', 'production']);
  });

  it('LIST sys/sync/associations and the per-secret query form', async () => {
    const l = await d.req('LIST', 'sys/sync/associations');
    expect(l.body.data).toMatchObject({ keys: ['secret/app/web'], total_associations: 1, total_secrets: 1 });
    expect(l.body.data.key_info['secret/app/web'][0]).toMatchObject({ mount: 'secret/', secret_path: 'app/web' });
    const q = await d.req('GET', 'sys/sync/associations/destinations?mount=secret&secret_name=app/web');
    expect(q.body.data.associated_destinations['hosting-project/web']).toMatchObject({
      type: 'hosting-project',
      name: 'web',
      sync_status: 'SYNCED',
    });
    expect((await d.req('GET', 'sys/sync/associations/destinations?mount=secret&secret_name=nope')).status).toBe(404);
  });

  it('refuses set on a missing destination, a non-KV mount, a folder and a missing secret', async () => {
    expect(
      (
        await d.req('POST', 'sys/sync/destinations/hosting-project/ghost/associations/set', {
          mount: 'secret',
          secret_name: 'app/web',
        })
      ).status,
    ).toBe(404);
    const t = await d.req('POST', 'sys/sync/destinations/hosting-project/web/associations/set', {
      mount: 'transit',
      secret_name: 'k',
    });
    expect(t.status).toBe(400);
    expect(t.body.errors[0]).toMatch(/^mount: "transit\/" is a transit mount; only KV version 2/);
    const none = await d.req('POST', 'sys/sync/destinations/hosting-project/web/associations/set', {
      mount: 'nowhere',
      secret_name: 'k',
    });
    expect(none.body.errors[0]).toMatch(/^mount: no secrets engine is mounted at "nowhere"/);
    const folder = await d.req('POST', 'sys/sync/destinations/hosting-project/web/associations/set', {
      mount: 'secret',
      secret_name: 'app/',
    });
    expect(folder.status).toBe(400);
    expect(folder.body.errors[0]).toMatch(/^secret_name: secret not found/);
    expect(
      (
        await d.req('POST', 'sys/sync/destinations/hosting-project/web/associations/set', {
          mount: 'secret',
          secret_name: 'app/missing',
        })
      ).status,
    ).toBe(400);
    expect(
      (await d.req('POST', 'sys/sync/destinations/hosting-project/web/associations/set', { mount: 'secret' })).body
        .errors[0],
    ).toBe('secret_name: is required');
  });

  it("refuses set when the caller cannot read the secret (403 with Vault's text)", async () => {
    await d.req('POST', 'sys/policies/acl/syncer', {
      policy: 'path "sys/sync/*" { capabilities = ["create", "read", "update", "delete", "list"] }',
    });
    const tok = await d.req('POST', 'auth/token/create', { policies: ['syncer'] });
    const token = tok.body.auth.client_token as string;
    const r = await d.req(
      'POST',
      'sys/sync/destinations/hosting-project/web/associations/set',
      { mount: 'secret', secret_name: 'app/web' },
      { token },
    );
    expect(r.status).toBe(403);
    expect(r.body.errors[0]).toBe('permission denied to read the content of the secret app/web in mount secret');
  });

  it('KV changes re-sync within seconds; a removed key is deleted at the destination', async () => {
    const acc = Object.values(await assocOf('web'))[0] as { accessor: string };
    const name = (k: string) => `VAULT_${acc.accessor.toUpperCase()}_APP_WEB_${k}`;
    await d.req('POST', 'secret/data/app/web', { data: { API_KEY: 'k2' } });
    await until(
      () => [vc.valueOf(name('API_KEY')), vc.valueOf(name('DB_URL'))],
      ([a, b]) => a === 'k2' && b === undefined,
    );
    await until(
      () => assocOf('web'),
      (m) =>
        Object.keys(m).length === 1 &&
        Object.values(m).every((r) => (r as { sync_status: string }).sync_status === 'SYNCED'),
    );
  });

  it("refuses to delete a destination that manages secrets, with Vault's text", async () => {
    const r = await d.req('DELETE', 'sys/sync/destinations/hosting-project/web');
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['store cannot be deleted because it is still managing secrets']);
  });

  it('remove takes the secret as `name` (spec) or `secret_name`, unsyncs, and succeeds again when absent', async () => {
    const r = await d.req('POST', 'sys/sync/destinations/hosting-project/web/associations/remove', {
      mount: 'secret',
      name: 'app/web',
    });
    expect(r.status).toBe(200);
    expect(
      Object.values(r.body.data.associated_secrets).map((x) => (x as { sync_status: string }).sync_status),
    ).toEqual(['UNSYNCED']);
    expect(vc.envs).toHaveLength(0);
    expect(await assocOf('web')).toEqual({});
    const again = await d.req('POST', 'sys/sync/destinations/hosting-project/web/associations/remove', {
      mount: 'secret',
      secret_name: 'app/web',
    });
    expect(again.status).toBe(200);
    expect((await d.req('LIST', 'sys/sync/associations')).status).toBe(404);
  });

  it('a destination the network guard blocks ends CLIENT_SIDE_ERROR without contacting it', async () => {
    await d.req(
      'POST',
      'sys/sync/destinations/hosting-project/guarded',
      vercelBody({ allowed_ipv4_addresses: [], allowed_ports: [] }),
    );
    const before = vc.server.log.length;
    const r = await d.req('POST', 'sys/sync/destinations/hosting-project/guarded/associations/set', {
      mount: 'secret',
      secret_name: 'app/web',
    });
    const rec = Object.values(r.body.data.associated_secrets)[0] as { sync_status: string; error: string };
    expect(rec.sync_status).toBe('CLIENT_SIDE_ERROR');
    expect(rec.error).toMatch(/network guard: port \d+ is not allowed/);
    expect(vc.server.log.length).toBe(before);
    // Fixing the destination retries the failed association at once.
    await d.req(
      'PATCH',
      'sys/sync/destinations/hosting-project/guarded',
      { allowed_ipv4_addresses: ['127.0.0.1/32'], allowed_ports: [vc.server.port] },
      { headers: { 'Content-Type': 'application/merge-patch+json' } },
    );
    await until(
      () => assocOf('guarded'),
      (m) =>
        Object.values(m).length > 0 &&
        Object.values(m).every((x) => (x as { sync_status: string }).sync_status === 'SYNCED'),
    );
  });

  it('purge=true unsyncs everything and then deletes the destination; force_delete leaves secrets behind', async () => {
    const p = await d.req('DELETE', 'sys/sync/destinations/hosting-project/guarded?purge=true');
    expect(p.status).toBe(200);
    expect(p.body.data.purge_initiated_at).toBeTruthy();
    await until(
      () => d.req('GET', 'sys/sync/destinations/hosting-project/guarded'),
      (r) => r.status === 404,
    );
    expect(vc.envs).toHaveLength(0);

    await d.req('POST', 'sys/sync/destinations/hosting-project/forced', vercelBody());
    await d.req('POST', 'sys/sync/destinations/hosting-project/forced/associations/set', {
      mount: 'secret',
      secret_name: 'app/web',
    });
    expect(vc.envs).toHaveLength(1);
    expect((await d.req('DELETE', 'sys/sync/destinations/hosting-project/forced?force_delete=true')).status).toBe(204);
    expect((await d.req('GET', 'sys/sync/destinations/hosting-project/forced')).status).toBe(404);
    expect(vc.envs).toHaveLength(1);
    vc.envs.length = 0;
  });

  it('config: disabled holds operations as PENDING until re-enabled', async () => {
    const c = await d.req(
      'PATCH',
      'sys/sync/config',
      { disabled: 'true' },
      { headers: { 'Content-Type': 'application/merge-patch+json' } },
    );
    expect(c.body.data).toEqual({ disabled: true, queue_capacity: 1000000 });
    const r = await d.req('POST', 'sys/sync/destinations/hosting-project/web/associations/set', {
      mount: 'secret',
      secret_name: 'app/web',
    });
    expect(
      Object.values(r.body.data.associated_secrets).map((x) => (x as { sync_status: string }).sync_status),
    ).toEqual(['PENDING']);
    expect(vc.envs).toHaveLength(0);
    await d.req(
      'PATCH',
      'sys/sync/config',
      { disabled: false },
      { headers: { 'Content-Type': 'application/merge-patch+json' } },
    );
    await until(
      () => vc.envs.length,
      (n) => n === 1,
    );
    expect((await d.req('GET', 'sys/sync/config')).body.data).toEqual({ disabled: false, queue_capacity: 1000000 });
    expect(
      (
        await d.req(
          'PATCH',
          'sys/sync/config',
          { queue_capacity: 0 },
          { headers: { 'Content-Type': 'application/merge-patch+json' } },
        )
      ).body.errors[0],
    ).toMatch(/^queue_capacity: must be at least 1/);
  });
});

describe('keyhold sync CLI', () => {
  it('creates a destination with the token from stdin and refuses it in argv', async () => {
    const refused = await d.cli([
      'sync',
      'dest',
      'create',
      'hosting-project',
      'cli',
      '--access-token',
      vc.token,
      '--project-id',
      vc.projectId,
      '--deployment-environments',
      'preview',
    ]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/access_token is sensitive: give it as @file or - \(stdin\)/);
    const args = [
      'sync',
      'dest',
      'create',
      'hosting-project',
      'cli',
      '--access-token',
      '-',
      '--project-id',
      vc.projectId,
      '--team-id',
      vc.teamId,
      '--deployment-environments',
      'preview,development',
      '--endpoint-url',
      vc.url,
      '--allowed-ipv4-address',
      '127.0.0.1/32',
      '--allowed-port',
      String(vc.server.port),
    ];
    const ok = await d.cli(args, { input: vc.token + '\n' });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/access_token\s+\*{5}/);
    expect(ok.stdout).not.toContain(vc.token);
    expect(ok.stdout).toMatch(new RegExp(`allowed_ports\\s+\\[${vc.server.port}\\]`));
    expect(ok.stdout).toMatch(/allowed_ipv4_addresses\s+\["127.0.0.1\/32"\]/);
    const wrongField = await d.cli(['sync', 'dest', 'update', 'hosting-project', 'cli', '--client-id', 'x']);
    expect(wrongField.exitCode).toBe(1);
    expect(wrongField.stderr).toMatch(/--client-id does not apply to hosting-project/);
  });

  it('reads a credentials file given as @file', async () => {
    const f = join(d.dir, 'token.txt');
    writeFileSync(f, vc.token, { mode: 0o600 });
    const r = await d.cli([
      'sync',
      'dest',
      'update',
      'hosting-project',
      'cli',
      'access_token=@' + f,
      '--format',
      'json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).connection_details.access_token).toBe('*****');
  });

  it('assoc set / status / remove / list, config, and exit 2 on server errors', async () => {
    const set = await d.cli([
      'sync',
      'assoc',
      'set',
      'hosting-project',
      'cli',
      '--mount',
      'secret',
      '--secret',
      'app/web',
    ]);
    expect(set.exitCode, set.stderr).toBe(0);
    expect(set.stdout, set.stdout).toMatch(/SYNCED/);
    expect(set.stdout).not.toMatch(/\x1b\[/); // no colour off a TTY
    const status = await d.cli(['sync', 'status', '--format', 'json']);
    const rows = JSON.parse(status.stdout) as Array<{ destination: string; sync_status: string }>;
    expect(rows.filter((r) => r.destination === 'hosting-project/cli').map((r) => r.sync_status)).toEqual(['SYNCED']);
    const table = await d.cli(['sync', 'status', '--name', 'cli']);
    expect(table.stdout.split('\n')[0]).toMatch(/^DESTINATION\s+MOUNT\s+SECRET\s+SUB KEY\s+STATUS/);
    const list = await d.cli(['sync', 'assoc', 'list']);
    expect(list.stdout).toMatch(/secret\/app\/web\s+.*hosting-project\/cli/);
    const rm = await d.cli([
      'sync',
      'assoc',
      'remove',
      'hosting-project',
      'cli',
      '--mount',
      'secret',
      '--secret',
      'app/web',
    ]);
    expect(rm.exitCode).toBe(0);
    expect(rm.stdout).toMatch(/UNSYNCED/);
    const cfg = await d.cli(['sync', 'config', '--queue-capacity', '5000', '--format', 'json']);
    expect(JSON.parse(cfg.stdout)).toEqual({ disabled: false, queue_capacity: 5000 });
    expect((await d.cli(['sync', 'config', '--reset'])).exitCode).toBe(0);
    const dests = await d.cli(['sync', 'dest', 'list']);
    expect(dests.stdout).toMatch(/hosting-project\s+cli/);
    const gone = await d.cli(['sync', 'dest', 'read', 'hosting-project', 'ghost']);
    expect(gone.exitCode).toBe(2);
    expect((await d.cli(['sync', 'dest', 'delete', 'hosting-project', 'cli'])).exitCode).toBe(0);
  });

  it('activation flags: without KEYHOLD_SYNC_REQUIRE_ACTIVATION secrets-sync reads as activated, and activating is accepted', async () => {
    const r = await d.req('GET', 'sys/activation-flags');
    expect(r.status, r.text).toBe(200);
    expect(r.body.data).toEqual({ activated: ['secrets-sync'], unactivated: [] });
    const a = await d.req('POST', 'sys/activation-flags/secrets-sync/activate', {});
    expect(a.status, a.text).toBe(200);
    expect(a.body.data.activated).toEqual(['secrets-sync']);
  });
});
