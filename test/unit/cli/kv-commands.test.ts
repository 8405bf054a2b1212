import { describe, expect, it } from 'vitest';
import { runCli, type Exchange } from './harness.js';

/** sys/mounts answer with secret/ as KV v2 and old/ as KV v1. */
const MOUNTS: Exchange = {
  method: 'GET',
  path: 'sys/mounts',
  reply: {
    data: {
      'secret/': { type: 'kv', options: { version: '2' } },
      'old/': { type: 'kv', options: null },
      'transit/': { type: 'transit' },
    },
  },
};

describe('kv put', () => {
  it('resolves the mount from sys/mounts and writes data/ with cas, printing the version table', async () => {
    const meta = {
      version: 3,
      created_time: '2026-01-01T00:00:00Z',
      deletion_time: '',
      destroyed: false,
      custom_metadata: null,
    };
    const r = await runCli(
      ['kv', 'put', '--cas', '2', 'secret/app/db', 'user=admin', 'password=-'],
      [MOUNTS, { method: 'POST', path: 'secret/data/app/db', reply: { data: meta } }],
      's3cr3t\n',
    );
    expect(r.status).toBe(0);
    expect(r.client.sent[1]!.body).toEqual({ data: { user: 'admin', password: 's3cr3t' }, options: { cas: 2 } });
    expect(r.stdout).toContain('=== Secret Path ===\nsecret/data/app/db\n');
    expect(r.stdout).toContain('version            3');
    expect(r.stdout).toContain('deletion_time      n/a');
    expect(r.stdout).toContain('custom_metadata    <nil>');
  });

  it('takes a whole JSON object from stdin, and writes a KV v1 mount at the plain path', async () => {
    const r = await runCli(
      ['kv', 'put', 'old/app', '-'],
      [MOUNTS, { method: 'POST', path: 'old/app', status: 204, reply: null }],
      '{"a":1}',
    );
    expect(r.client.sent[1]!.body).toEqual({ a: 1 });
    expect(r.stderr).toBe('Success! Data written to: old/app\n');
    expect(r.status).toBe(0);
  });

  it('refuses no data and a --cas that is not a number locally (exit 1)', async () => {
    expect((await runCli(['kv', 'put', 'secret/x'])).status).toBe(1);
    const r = await runCli(['kv', 'put', '--cas', 'x', 'secret/x', 'a=1'], [MOUNTS]);
    expect(r.status).toBe(1);
    expect(String(r.error)).toMatch(/--cas: expected a non-negative integer/);
  });
});

describe('kv get', () => {
  const answer = { data: { data: { password: 'p', user: 'u' }, metadata: { version: 2, destroyed: false } } };

  it('reads a version with --version=N and prints the Data section', async () => {
    const r = await runCli(
      ['kv', 'get', '--version=2', 'secret/app/db'],
      [MOUNTS, { method: 'GET', path: 'secret/data/app/db?version=2', reply: answer }],
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/=+ Data =+\nKey         Value\n---         -----\npassword    p\nuser        u\n$/);
  });

  it('prints one field raw with --field, and Vault’s JSON with --format json', async () => {
    const f = await runCli(
      ['--field', 'password', 'kv', 'get', 'secret/app/db'],
      [MOUNTS, { method: 'GET', path: 'secret/data/app/db', reply: answer }],
    );
    expect(f.stdout).toBe('p');
    const j = await runCli(
      ['kv', 'get', '--mount', 'secret', 'app/db', '--format', 'json'],
      [
        { method: 'GET', path: 'sys/internal/ui/mounts/secret', reply: { data: { options: { version: '2' } } } },
        { method: 'GET', path: 'secret/data/app/db', reply: answer },
      ],
    );
    expect(JSON.parse(j.stdout)).toEqual(answer);
  });

  it('exits 2 naming the path when there is no secret', async () => {
    const r = await runCli(
      ['kv', 'get', 'secret/nope'],
      [MOUNTS, { method: 'GET', path: 'secret/data/nope', status: 404, reply: { errors: [] } }],
    );
    expect(r.status).toBe(2);
    expect(String((r.error as Error).message)).toContain('No value found at secret/data/nope');
    expect(r.stdout).toBe('');
  });

  it('exits 1 when the path names no KV mount', async () => {
    const r = await runCli(['kv', 'get', 'transit/keys/x'], [MOUNTS]);
    expect(r.status).toBe(1);
  });
});
