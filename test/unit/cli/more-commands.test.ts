import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'keyhold-cli-cmd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sync dest create', () => {
  it('refuses a sensitive field given as a value, before any request (exit 1)', async () => {
    const r = await runCli([
      'sync',
      'dest',
      'create',
      'repohost',
      'gh',
      '--access-token',
      'ghp_secret',
      '--repository-owner',
      'acme',
    ]);
    expect(r.status).toBe(1);
    expect(String(r.error)).toMatch(/access_token is sensitive/);
    expect(r.client.sent).toEqual([]);
  });

  it('reads a sensitive field from stdin and sends flags, lists and pairs as fields', async () => {
    const r = await runCli(
      [
        'sync',
        'dest',
        'create',
        'repohost',
        'gh',
        '--access-token',
        '-',
        '--repository-owner',
        'acme',
        '--allowed-port',
        '8443,9443',
        'repository_name=app',
        '--format',
        'json',
      ],
      [
        {
          method: 'POST',
          path: 'sys/sync/destinations/repohost/gh',
          reply: { data: { name: 'gh', type: 'repohost' } },
        },
      ],
      'ghp_from_stdin\n',
    );
    expect(r.status).toBe(0);
    expect(r.client.sent[0]!.body).toEqual({
      access_token: 'ghp_from_stdin',
      repository_owner: 'acme',
      allowed_ports: [8443, 9443],
      repository_name: 'app',
    });
    expect(JSON.parse(r.stdout)).toEqual({ name: 'gh', type: 'repohost' });
  });
});

describe('kv metadata put', () => {
  it('sends the settings, custom metadata and success on stderr', async () => {
    const r = await runCli(
      [
        'kv',
        'metadata',
        'put',
        '--mount',
        'secret',
        '--max-versions',
        '5',
        '--cas-required',
        '--custom-metadata',
        'owner=ops',
        'app/db',
      ],
      [
        { method: 'GET', path: 'sys/internal/ui/mounts/secret', reply: { data: { options: { version: '2' } } } },
        { method: 'POST', path: 'secret/metadata/app/db', status: 204, reply: null },
      ],
    );
    expect(r.client.sent[1]!.body).toEqual({ max_versions: 5, cas_required: true, custom_metadata: { owner: 'ops' } });
    expect(r.stderr).toBe('Success! Data written to: secret/metadata/app/db\n');
    expect(r.stdout).toBe('');
  });
});

describe('policy write and secrets list', () => {
  it('uploads a policy from a file', async () => {
    const f = join(dir, 'p.hcl');
    writeFileSync(f, 'path "x" { capabilities = ["read"] }\n');
    const r = await runCli(
      ['policy', 'write', 'app', f],
      [{ method: 'POST', path: 'sys/policies/acl/app', status: 204, reply: null }],
    );
    expect(r.client.sent[0]!.body).toEqual({ policy: 'path "x" { capabilities = ["read"] }\n' });
    expect(r.stderr).toBe('Success! Uploaded policy: app\n');
  });

  it('prints the mounts as a sorted table', async () => {
    const r = await runCli(
      ['secrets', 'list'],
      [
        {
          method: 'GET',
          path: 'sys/mounts',
          reply: {
            data: {
              'transit/': { type: 'transit', accessor: 'a1', description: '' },
              'secret/': { type: 'kv', accessor: 'a2', description: 'kv' },
            },
          },
        },
      ],
    );
    expect(r.stdout).toBe(
      'Path        Type       Accessor    Description\n--------    -------    --------    -----------\nsecret/     kv         a2          kv\ntransit/    transit    a1\n',
    );
  });
});

describe('usage errors', () => {
  it('exit 1 for an unknown command or a missing argument, with nothing sent', async () => {
    expect((await runCli(['kv', 'gett', 'x'])).status).toBe(1);
    const r = await runCli(['transit', 'encrypt']);
    expect(r.status).toBe(1);
    expect(r.client.sent).toEqual([]);
  });
});
