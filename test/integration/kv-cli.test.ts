/** `keyhold kv ...` against the real daemon (dev mode): vault-like output, exit codes, mount resolution. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;
beforeAll(async () => {
  d = await startDaemon();
  expect((await d.req('POST', 'sys/mounts/team/kv', { type: 'kv', options: { version: '2' } })).status).toBe(204);
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

describe('kv put and get', () => {
  it('writes k=v, k=@file and k=- pairs and reads them back', async () => {
    const file = join(d.dir, 'pw.txt');
    writeFileSync(file, 'from-file');
    const put = await d.cli(['kv', 'put', 'secret/cli/db', 'user=admin', `pw=@${file}`, 'token=-'], {
      input: 'from-stdin\n',
    });
    expect(put.exitCode).toBe(0);
    expect(put.stdout).toContain('secret/data/cli/db');
    expect(put.stdout).toMatch(/version\s+1$/m);
    const r = await d.req('GET', 'secret/data/cli/db');
    expect(r.body.data.data).toEqual({ user: 'admin', pw: 'from-file', token: 'from-stdin' });
  });

  it('prints metadata and data sections like vault kv get', async () => {
    const g = await d.cli(['kv', 'get', 'secret/cli/db']);
    expect(g.exitCode).toBe(0);
    expect(g.stdout).toMatch(/^=+ Secret Path =+\nsecret\/data\/cli\/db\n/);
    expect(g.stdout).toMatch(/=+ Metadata =+\nKey\s+Value\n---\s+-----\n/);
    expect(g.stdout).toMatch(/custom_metadata\s+<nil>/);
    expect(g.stdout).toMatch(/deletion_time\s+n\/a/);
    expect(g.stdout).toMatch(/=+ Data =+\nKey\s+Value\n---\s+-----\npw\s+from-file\ntoken\s+from-stdin\nuser\s+admin$/);
  });

  it('prints one raw data value with --field', async () => {
    const g = await d.cli(['kv', 'get', '--field', 'pw', 'secret/cli/db']);
    expect(g.exitCode).toBe(0);
    expect(g.stdout).toBe('from-file');
    const missing = await d.cli(['kv', 'get', '--field', 'nope', 'secret/cli/db']);
    expect(missing.exitCode).toBe(1);
  });

  it("prints Vault's JSON shape with --format json", async () => {
    const g = await d.cli(['--format', 'json', 'kv', 'get', 'secret/cli/db']);
    expect(g.exitCode).toBe(0);
    const body = JSON.parse(g.stdout);
    expect(body.data.data.user).toBe('admin');
    expect(body.data.metadata.version).toBe(1);
    expect(body).toHaveProperty('request_id');
  });

  it('reads an older version with --version=N', async () => {
    await d.cli(['kv', 'put', 'secret/cli/v', 'n=1']);
    await d.cli(['kv', 'put', 'secret/cli/v', 'n=2']);
    const g = await d.cli(['kv', 'get', '--version=1', '--field', 'n', 'secret/cli/v']);
    expect(g.exitCode).toBe(0);
    expect(g.stdout).toBe('1');
  });

  it('takes a whole JSON object from stdin with -', async () => {
    const put = await d.cli(['kv', 'put', 'secret/cli/json', '-'], { input: '{"a": {"b": 1}, "c": "d"}' });
    expect(put.exitCode).toBe(0);
    expect((await d.req('GET', 'secret/data/cli/json')).body.data.data).toEqual({ a: { b: 1 }, c: 'd' });
  });

  it("checks --cas and exits 2 with the server's message on mismatch", async () => {
    expect((await d.cli(['kv', 'put', '--cas', '0', 'secret/cli/cas', 'a=1'])).exitCode).toBe(0);
    const again = await d.cli(['kv', 'put', '--cas', '0', 'secret/cli/cas', 'a=2']);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain('check-and-set parameter did not match the current version');
    expect((await d.cli(['kv', 'put', '--cas', '1', 'secret/cli/cas', 'a=2'])).exitCode).toBe(0);
  });

  it('exits 1 without data and 2 for a missing secret', async () => {
    expect((await d.cli(['kv', 'put', 'secret/cli/empty'])).exitCode).toBe(1);
    const g = await d.cli(['kv', 'get', 'secret/cli/never']);
    expect(g.exitCode).toBe(2);
    expect(g.stderr).toContain('No value found at secret/data/cli/never');
  });
});

describe('kv patch', () => {
  it('changes some keys, keeps the rest, and removes keys with --remove', async () => {
    await d.cli(['kv', 'put', 'secret/cli/p', 'a=1', 'b=2', 'c=3']);
    const p = await d.cli(['kv', 'patch', '--remove', 'c', 'secret/cli/p', 'b=20']);
    expect(p.exitCode).toBe(0);
    expect(p.stdout).toMatch(/version\s+2/);
    expect((await d.req('GET', 'secret/data/cli/p')).body.data.data).toEqual({ a: '1', b: '20' });
  });

  it('exits 2 for a missing secret', async () => {
    expect((await d.cli(['kv', 'patch', 'secret/cli/none', 'a=1'])).exitCode).toBe(2);
  });
});

describe('kv list, delete, undelete, destroy', () => {
  it('lists keys and folders', async () => {
    await d.cli(['kv', 'put', 'secret/cli/l/x', 'a=1']);
    await d.cli(['kv', 'put', 'secret/cli/l/y/z', 'a=1']);
    const l = await d.cli(['kv', 'list', 'secret/cli/l']);
    expect(l.exitCode).toBe(0);
    expect(l.stdout).toBe('Keys\n----\nx\ny/');
    const j = await d.cli(['--format', 'json', 'kv', 'list', 'secret/cli/l/']);
    expect(JSON.parse(j.stdout)).toEqual(['x', 'y/']);
    const root = await d.cli(['kv', 'list', 'secret/']);
    expect(root.stdout).toContain('cli/');
    expect((await d.cli(['kv', 'list', 'secret/cli/nothing'])).exitCode).toBe(2);
  });

  it('soft-deletes, shows the deletion, undeletes, and destroys', async () => {
    await d.cli(['kv', 'put', 'secret/cli/d', 'a=1']);
    await d.cli(['kv', 'put', 'secret/cli/d', 'a=2']);
    const del = await d.cli(['kv', 'delete', 'secret/cli/d']);
    expect(del.exitCode).toBe(0);
    expect(del.stderr).toContain('Success! Data deleted (if it existed) at: secret/data/cli/d');
    const g = await d.cli(['kv', 'get', 'secret/cli/d']);
    // As `vault kv get` (issue 34 item 4): a deleted version shows its metadata and exits 0.
    expect(g.exitCode).toBe(0);
    expect(g.stdout).toMatch(/deletion_time\s+\d{4}-/);
    expect(g.stdout).not.toContain('== Data ==');
    const gf = await d.cli(['kv', 'get', '--field', 'a', 'secret/cli/d']);
    expect(gf.exitCode).toBe(1);
    expect(gf.stderr).toContain('version 2 of secret/data/cli/d is deleted');
    expect((await d.cli(['kv', 'undelete', '--versions', '2', 'secret/cli/d'])).exitCode).toBe(0);
    expect((await d.cli(['kv', 'get', '--field', 'a', 'secret/cli/d'])).stdout).toBe('2');
    expect((await d.cli(['kv', 'delete', '--versions', '1', 'secret/cli/d'])).exitCode).toBe(0);
    expect((await d.req('GET', 'secret/data/cli/d?version=1')).status).toBe(404);
    expect((await d.cli(['kv', 'destroy', '--versions', '1,2', 'secret/cli/d'])).exitCode).toBe(0);
    const m = (await d.req('GET', 'secret/metadata/cli/d')).body.data;
    expect(m.versions['1'].destroyed).toBe(true);
    expect(m.versions['2'].destroyed).toBe(true);
  });

  it('requires --versions for undelete and destroy (usage error, exit 1)', async () => {
    expect((await d.cli(['kv', 'destroy', 'secret/cli/d'])).exitCode).toBe(1);
    expect((await d.cli(['kv', 'undelete', '--versions', 'x', 'secret/cli/d'])).exitCode).toBe(1);
  });
});

describe('kv metadata', () => {
  it('puts settings and custom metadata, gets them with version sections, patches and deletes', async () => {
    await d.cli(['kv', 'put', 'secret/cli/m', 'a=1']);
    const put = await d.cli([
      'kv',
      'metadata',
      'put',
      '--max-versions',
      '5',
      '--cas-required',
      'true',
      '--delete-version-after',
      '1h',
      '--custom-metadata',
      'owner=ops',
      '--custom-metadata',
      'tier=gold',
      'secret/cli/m',
    ]);
    expect(put.exitCode).toBe(0);
    const m = (await d.req('GET', 'secret/metadata/cli/m')).body.data;
    expect(m).toMatchObject({
      max_versions: 5,
      cas_required: true,
      delete_version_after: '1h0m0s',
      custom_metadata: { owner: 'ops', tier: 'gold' },
    });

    const get = await d.cli(['kv', 'metadata', 'get', 'secret/cli/m']);
    expect(get.exitCode).toBe(0);
    expect(get.stdout).toContain('secret/metadata/cli/m');
    expect(get.stdout).toMatch(/max_versions\s+5/);
    expect(get.stdout).toMatch(/=+ Version 1 =+/);

    const patch = await d.cli([
      'kv',
      'metadata',
      'patch',
      '--remove-custom-metadata',
      'tier',
      '--custom-metadata',
      'team=a',
      'secret/cli/m',
    ]);
    expect(patch.exitCode).toBe(0);
    expect((await d.req('GET', 'secret/metadata/cli/m')).body.data.custom_metadata).toEqual({
      owner: 'ops',
      team: 'a',
    });

    const json = await d.cli(['--format', 'json', 'kv', 'metadata', 'get', 'secret/cli/m']);
    expect(JSON.parse(json.stdout).data.current_version).toBe(1);

    expect((await d.cli(['kv', 'metadata', 'delete', 'secret/cli/m'])).exitCode).toBe(0);
    expect((await d.req('GET', 'secret/metadata/cli/m')).status).toBe(404);
    expect((await d.cli(['kv', 'metadata', 'get', 'secret/cli/m'])).exitCode).toBe(2);
  });
});

describe('mount resolution', () => {
  it('finds the longest KV mount in the path (team/kv/app -> mount team/kv)', async () => {
    expect((await d.cli(['kv', 'put', 'team/kv/app', 'a=1'])).exitCode).toBe(0);
    expect((await d.req('GET', 'team/kv/data/app')).body.data.data).toEqual({ a: '1' });
  });

  it('accepts --mount with a path relative to it', async () => {
    expect((await d.cli(['kv', 'put', '--mount', 'team/kv', 'other/x', 'b=2'])).exitCode).toBe(0);
    expect((await d.cli(['kv', 'get', '--mount', 'team/kv', '--field', 'b', 'other/x'])).stdout).toBe('2');
  });

  it('exits 1 when the path names only the mount', async () => {
    const r = await d.cli(['kv', 'get', 'secret/']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('names the mount secret/, not a secret in it');
  });

  it('exits 1 when no KV mount matches', async () => {
    const r = await d.cli(['kv', 'get', 'nomount/x']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('no KV version 2 mount found');
  });

  it('falls back to the first segment for a token that cannot read sys/mounts', async () => {
    await d.req('POST', 'sys/policies/acl/cli-kv', { policy: 'path "secret/data/*" { capabilities = ["read"] }' });
    const token = (await d.req('POST', 'auth/token/create', { policies: ['cli-kv'] })).body.auth.client_token as string;
    const g = await d.cli(['kv', 'get', '--field', 'user', 'secret/cli/db'], { token });
    expect(g.exitCode).toBe(0);
    expect(g.stdout).toBe('admin');
  });
});
