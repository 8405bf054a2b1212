import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup, httpReq, startDaemon, type Daemon } from '../support/daemon.js';
import { storedRecord } from '../support/stored-record.js';
import { initialize, must, startFileDaemon, unseal } from '../support/crash-harness.js';

function entries(file: string): Array<Record<string, any>> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe('audit devices on a dev daemon', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon({ tcp: true });
  });
  afterAll(async () => {
    await d.kill();
    cleanup(d.dir);
  });

  it('keyhold audit enable/list/disable manage a file device', async () => {
    const file = join(d.dir, 'cli.log');
    const en = await d.cli(['audit', 'enable', 'file', `path=${file}`]);
    expect(en.exitCode, en.stderr).toBe(0);
    expect(en.stderr).toBe('Success! Enabled the file audit device at: file/');
    const en2 = await d.cli([
      'audit',
      'enable',
      '--path',
      'backup',
      '--description',
      'second copy',
      'file',
      `file_path=${join(d.dir, 'b.log')}`,
      'mode=0640',
    ]);
    expect(en2.exitCode, en2.stderr).toBe(0);
    const list = await d.cli(['audit', 'list', '--detailed']);
    expect(list.stdout).toMatch(/^Path\s+Type\s+Description\s+Options\n/);
    expect(list.stdout).toContain(`file/      file`);
    expect(list.stdout).toContain(`backup/    file    second copy    file_path=${join(d.dir, 'b.log')} mode=0640`);
    const json = JSON.parse((await d.cli(['audit', 'list', '--format', 'json'])).stdout);
    expect(json['file/']).toEqual({
      path: 'file/',
      type: 'file',
      description: '',
      options: { file_path: file },
      local: false,
    });
    expect(statSync(join(d.dir, 'b.log')).mode & 0o777).toBe(0o640);
    expect((await d.cli(['audit', 'disable', 'backup'])).exitCode).toBe(0);
    expect((await d.cli(['audit', 'disable', 'file'])).exitCode).toBe(0);
    const empty = await d.cli(['audit', 'list']);
    expect(empty.stdout).toBe('');
    expect(empty.stderr).toBe('No audit devices are enabled.');
    const bad = await d.cli(['audit', 'enable', 'file', 'path=relative.log']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('options.file_path: must be an absolute path');
  });

  it('logs request and response with id, accessor, operation, path, remote address and status; sys/audit-hash finds values', async () => {
    const file = join(d.dir, 'main.log');
    await must(d, 'PUT', 'sys/audit/main', { type: 'file', options: { file_path: file } });
    await must(d, 'POST', 'transit/keys/aud', {});
    const pt = Buffer.from('audited plaintext').toString('base64');
    const r = await httpReq({ base: d.tcp }, 'POST', 'transit/encrypt/aud', { plaintext: pt }, { token: 'root' });
    expect(r.status).toBe(200);
    const mine = entries(file).filter((e) => e.request.id === r.body.request_id);
    expect(mine.map((e) => e.type)).toEqual(['request', 'response']);
    const [rq, rs] = mine;
    expect(rq!.request).toMatchObject({
      operation: 'update',
      path: 'transit/encrypt/aud',
      remote_address: '127.0.0.1',
      mount_type: 'transit',
    });
    expect(rq!.auth.client_token).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(rq!.auth.accessor).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(Date.parse(rq!.time)).toBeGreaterThan(Date.now() - 60_000);
    expect(rs!.response.status).toBe(200);
    const hash = async (v: string) => (await must(d, 'POST', 'sys/audit-hash/main', { input: v })).body.data.hash;
    expect(rq!.request.data.plaintext).toBe(await hash(pt));
    expect(rs!.response.data.ciphertext).toBe(await hash(r.body.data.ciphertext));
    expect(rq!.auth.client_token).toBe(await hash('root'));
    // Errors are logged with their status and message.
    const bad = await d.req('POST', 'transit/decrypt/aud', { ciphertext: 'vault:v1:AAAA' });
    const err =
      entries(file).find((e) => e.type === 'response' && e.request.id === bad.body?.request_id) ??
      entries(file)
        .filter((e) => e.type === 'response')
        .at(-1)!;
    expect(err.response.status).toBe(400);
    expect(err.error).toBeTruthy();
    // An unknown device: Vault's 400 `unknown audit backend "<path>/"` (hvac's tests match the words).
    const unknown = await d.req('POST', 'sys/audit-hash/nope', { input: 'x' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ errors: ['unknown audit backend "nope/"'] });
    await must(d, 'DELETE', 'sys/audit/main');
  });

  it('needs sudo: a token without it cannot list, enable or disable devices; refusals are audited', async () => {
    const file = join(d.dir, 'denied.log');
    await must(d, 'PUT', 'sys/audit/denied', { type: 'file', options: { file_path: file } });
    await must(d, 'PUT', 'sys/policies/acl/auditor', {
      policy: 'path "sys/audit*" { capabilities = ["read", "update", "delete", "list"] }',
    });
    const t = (await must(d, 'POST', 'auth/token/create', { policies: ['auditor'] })).body.auth.client_token;
    expect((await d.req('GET', 'sys/audit', undefined, { token: t })).status).toBe(403);
    const refused = entries(file).filter((e) => e.type === 'response' && e.response.status === 403);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ error: 'permission denied', request: { path: 'sys/audit', operation: 'read' } });
    expect(refused[0]!.auth.client_token).toBe(
      (await must(d, 'POST', 'sys/audit-hash/denied', { input: t })).body.data.hash,
    );
    await must(d, 'DELETE', 'sys/audit/denied');
    expect(
      (await d.req('PUT', 'sys/audit/x', { type: 'file', options: { file_path: join(d.dir, 'x.log') } }, { token: t }))
        .status,
    ).toBe(403);
    await must(d, 'PUT', 'sys/policies/acl/auditor', {
      policy: 'path "sys/audit*" { capabilities = ["read", "update", "delete", "list", "sudo"] }',
    });
    expect((await d.req('GET', 'sys/audit', undefined, { token: t })).status).toBe(200);
  });

  it('reopens its file on SIGHUP, so log rotation works', async () => {
    const file = join(d.dir, 'rotate.log');
    await must(d, 'PUT', 'sys/audit/rotate', { type: 'file', options: { file_path: file } });
    await must(d, 'GET', 'sys/mounts');
    renameSync(file, file + '.1');
    d.proc.kill('SIGHUP');
    // The signal is handled asynchronously: wait (bounded) until new entries land in a new file.
    for (let i = 0; i < 100 && !(existsSync(file) && entries(file).length > 0); i++) {
      await must(d, 'GET', 'sys/mounts');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(entries(file).length).toBeGreaterThan(0);
    expect(entries(file + '.1').length).toBeGreaterThan(0);
    await must(d, 'DELETE', 'sys/audit/rotate');
  });

  it('fails closed: with its only device unable to write, the daemon refuses requests (503) but still reports health', async () => {
    await must(d, 'PUT', 'sys/audit/good', { type: 'file', options: { file_path: join(d.dir, 'good.log') } });
    await must(d, 'PUT', 'sys/audit/full', { type: 'file', options: { file_path: '/dev/full', mode: '0000' } });
    // One working device is enough.
    expect((await d.req('POST', 'transit/encrypt/aud', { plaintext: 'aGk=' })).status).toBe(200);
    expect(Object.keys((await must(d, 'GET', 'sys/audit')).body.data).sort()).toEqual(['full/', 'good/']);
    // The disable itself succeeds, but its response can no longer be recorded: the caller is told so.
    expect((await d.req('DELETE', 'sys/audit/good')).status).toBe(503);
    const r = await d.req('POST', 'transit/encrypt/aud', { plaintext: 'aGk=' });
    expect(r.status).toBe(503);
    expect(r.body.errors[0]).toMatch(/no enabled audit device could record the request/);
    expect(r.body.data?.ciphertext).toBeUndefined();
    expect((await d.req('POST', 'transit/keys/not-created', {})).status).toBe(503);
    expect((await d.req('GET', 'transit/keys/not-created')).status).toBe(503);
    expect((await d.req('GET', 'sys/health', undefined, { token: null })).status).toBe(200);
    expect(d.output()).toContain('ENOSPC');
  });
});

describe('audit devices survive a restart (table behind the barrier)', () => {
  it('keeps devices and their salts across restart and unseal', { timeout: 60_000 }, async () => {
    let d = await startFileDaemon();
    try {
      const { key, root } = await initialize(d);
      const file = join(d.dir, 'persist.log');
      await must(d, 'PUT', 'sys/audit/file', { type: 'file', options: { file_path: file } });
      const h1 = (await must(d, 'POST', 'sys/audit-hash/file', { input: 'stable' })).body.data.hash;
      const before = entries(file).length;
      await d.stop();
      d = await startFileDaemon(d.dir);
      await unseal(d, key, root);
      expect(Object.keys((await must(d, 'GET', 'sys/audit')).body.data)).toEqual(['file/']);
      expect((await must(d, 'POST', 'sys/audit-hash/file', { input: 'stable' })).body.data.hash).toBe(h1);
      expect(entries(file).length).toBeGreaterThan(before);
      // The table and salt are stored encrypted: nothing in storage names the log file.
      const raw = storedRecord(join(d.dir, 'data'), 'sys/audit/table')!;
      expect(raw.length).toBeGreaterThan(0);
      expect(raw.includes(Buffer.from('persist.log'))).toBe(false);
    } finally {
      await d.stop();
      cleanup(d.dir);
    }
  });
});
