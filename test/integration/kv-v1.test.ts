/**
 * KV version 1 (issue 14 part 6): Vault's read/write/list/delete, the `ttl` key as lease_duration,
 * `sys/internal/ui/mounts` reporting version 1 so `keyhold kv` picks plain paths, `generic`, and the
 * upgrade to version 2 by tuning options.version=2 keeping the data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;
beforeAll(async () => {
  d = await startDaemon();
  expect((await d.req('POST', 'sys/mounts/kv1', { type: 'kv', options: { version: '1' } })).status).toBe(204);
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe('KV version 1 over HTTP', () => {
  it('writes and reads a flat object; ttl is the lease_duration, else the mount default', async () => {
    expect((await d.req('POST', 'kv1/app/db', { user: 'admin', password: 's3cr3t', ttl: '1h' })).status).toBe(204);
    const r = await d.req('GET', 'kv1/app/db');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      data: { user: 'admin', password: 's3cr3t', ttl: '1h' },
      lease_duration: 3600,
      lease_id: '',
      renewable: false,
    });
    await d.req('PUT', 'kv1/app/plain', { k: 'v' });
    expect((await d.req('GET', 'kv1/app/plain')).body.lease_duration).toBe(768 * 3600);
    // Replaced whole on write.
    await d.req('PUT', 'kv1/app/plain', { other: 1 });
    expect((await d.req('GET', 'kv1/app/plain')).body.data).toEqual({ other: 1 });
  });

  it('lists with folders, 404 for empty, deletes (204 also when absent), refuses an empty write', async () => {
    await d.req('POST', 'kv1/top', { a: 'b' });
    expect((await d.req('LIST', 'kv1/')).body.data.keys).toEqual(['app/', 'top']);
    expect((await d.req('GET', 'kv1/app?list=true')).body.data.keys).toEqual(['db', 'plain']);
    expect((await d.req('LIST', 'kv1/nothing')).status).toBe(404);
    expect((await d.req('DELETE', 'kv1/top')).status).toBe(204);
    expect((await d.req('DELETE', 'kv1/top')).status).toBe(204);
    expect((await d.req('GET', 'kv1/top')).status).toBe(404);
    const empty = await d.req('POST', 'kv1/x', {});
    expect(empty.status).toBe(400);
    expect(empty.body.errors).toEqual(['missing data fields']);
  });

  it('sys/internal/ui/mounts reports version 1; generic is KV version 1 keeping its type', async () => {
    expect((await d.req('GET', 'sys/internal/ui/mounts/kv1/app/db')).body.data).toMatchObject({
      type: 'kv',
      options: { version: '1' },
      path: 'kv1/',
    });
    expect((await d.req('POST', 'sys/mounts/gen', { type: 'generic' })).status).toBe(204);
    await d.req('POST', 'gen/k', { v: 'x' });
    expect((await d.req('GET', 'gen/k')).body.data).toEqual({ v: 'x' });
    expect((await d.req('GET', 'sys/mounts/gen')).body.data.type).toBe('generic');
  });
});

describe('keyhold kv on a version 1 mount', () => {
  it('put, get, list and delete use plain paths', async () => {
    const put = await d.cli(['kv', 'put', 'kv1/cli/s', 'a=1', 'b=two']);
    expect(put.exitCode, put.stderr).toBe(0);
    expect(put.stderr).toBe('Success! Data written to: kv1/cli/s');
    const get = await d.cli(['kv', 'get', '--format', 'json', 'kv1/cli/s']);
    expect(JSON.parse(get.stdout).data).toEqual({ a: '1', b: 'two' });
    expect((await d.cli(['--field', 'b', 'kv', 'get', 'kv1/cli/s'])).stdout).toBe('two');
    expect((await d.cli(['kv', 'list', 'kv1/cli'])).stdout).toContain('s');
    expect((await d.cli(['kv', 'delete', 'kv1/cli/s'])).exitCode).toBe(0);
    expect((await d.cli(['kv', 'get', 'kv1/cli/s'])).exitCode).toBe(2);
    const patch = await d.cli(['kv', 'patch', 'kv1/app/db', 'a=1']);
    expect(patch.exitCode).toBe(1);
    expect(patch.stderr).toMatch(/needs KV version 2/);
  });
});

describe('upgrade to version 2', () => {
  it('tuning options.version=2 keeps every key as version 1 of a v2 secret; downgrades are refused', async () => {
    const t = await d.req('POST', 'sys/mounts/kv1/tune', { options: { version: '2' } });
    expect(t.status, t.text).toBe(200);
    expect(t.body.warnings[0]).toMatch(/^Upgrading mount from version 1 to version 2/);
    const r = await d.req('GET', 'kv1/data/app/db');
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.data).toEqual({ user: 'admin', password: 's3cr3t', ttl: '1h' });
    expect(r.body.data.metadata.version).toBe(1);
    expect((await d.req('LIST', 'kv1/metadata/app')).body.data.keys).toEqual(['db', 'plain']);
    expect((await d.req('GET', 'sys/internal/ui/mounts/kv1')).body.data.options).toEqual({ version: '2' });
    const down = await d.req('POST', 'sys/mounts/kv1/tune', { options: { version: '1' } });
    expect(down.status).toBe(400);
    expect(down.body.errors).toEqual(['cannot downgrade mount from version 2']);
    // Still upgraded after a restart of the engines.
    expect((await d.cli(['kv', 'get', '--format', 'json', 'kv1/app/db'])).stdout).toContain('s3cr3t');
  });
});
