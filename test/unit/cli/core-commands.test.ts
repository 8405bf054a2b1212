import { describe, expect, it } from 'vitest';
import { runCli } from './harness.js';

describe('token create', () => {
  it('maps flags to the auth/token/create body and prints the token rows', async () => {
    const auth = {
      client_token: 'hvs.x',
      accessor: 'acc',
      lease_duration: 3600,
      renewable: true,
      policies: ['a', 'b', 'default'],
    };
    const r = await runCli(
      [
        'token',
        'create',
        '--policy',
        'a',
        '--policies',
        'b',
        '-ttl=1h',
        '--num-uses',
        '3',
        '-orphan',
        '--no-default-policy',
        '--type',
        'batch',
        '--format',
        'json',
      ],
      [{ method: 'POST', path: 'auth/token/create', reply: { auth } }],
    );
    expect(r.status).toBe(0);
    expect(r.client.sent[0]!.body).toEqual({
      policies: ['a', 'b'],
      ttl: '1h',
      num_uses: '3',
      no_parent: true,
      no_default_policy: true,
      type: 'batch',
    });
    // Issue 34 item 1: json is the vault CLI's envelope (jq -r .auth.client_token), in both faces.
    expect(JSON.parse(r.stdout)).toEqual({
      request_id: '',
      lease_id: '',
      lease_duration: 0,
      renewable: false,
      data: null,
      warnings: null,
      auth,
    });
    const t = await runCli(['token', 'create'], [{ method: 'POST', path: 'auth/token/create', reply: { auth } }]);
    expect(t.stdout).toMatch(/^token\s+hvs\.x$/m);
    expect(t.stdout).toMatch(/^token_policies\s+\["a","b","default"\]$/m);
  });

  it('creates against a role, and prints one field raw', async () => {
    const r = await runCli(
      ['token', 'create', '-role=deploy er', '-period=24h', '--field', 'token'],
      [{ method: 'POST', path: 'auth/token/create/deploy%20er', reply: { auth: { client_token: 'hvs.r' } } }],
    );
    expect(r.client.sent[0]!.body).toEqual({ period: '24h' });
    expect(r.stdout).toBe('hvs.r');
  });

  it('exits 2 when the server refuses', async () => {
    const r = await runCli(
      ['token', 'create'],
      [{ method: 'POST', path: 'auth/token/create', status: 403, reply: { errors: ['permission denied'] } }],
    );
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
  });
});

describe('operator init', () => {
  const answer = {
    keys: ['aa', 'bb', 'cc'],
    keys_base64: ['qq==', 'uw==', 'zA=='],
    root_token: 'hvs.root',
    keychain: false,
  };

  it('sends shares and threshold and prints the keys once, with what to do next', async () => {
    const r = await runCli(
      ['operator', 'init', '-key-shares=3', '-key-threshold=2', '--no-keychain'],
      [{ method: 'POST', path: 'sys/init', reply: answer }],
    );
    expect(r.client.sent[0]!.body).toEqual({ keychain: false, secret_shares: 3, secret_threshold: 2 });
    expect(r.stdout).toContain(
      'Unseal Key 1: qq==\nUnseal Key 2: uw==\nUnseal Key 3: zA==\n\nInitial Root Token: hvs.root\n',
    );
    expect(r.stdout).toContain('keyhold initialized with 3 key shares and a key threshold of 2.');
    expect(r.stdout).toContain('unseal with 2 of these keys');
    expect(r.status).toBe(0);
  });

  it('prints Vault’s JSON shape with --format json', async () => {
    const r = await runCli(
      ['operator', 'init', '--format', 'json'],
      [{ method: 'POST', path: 'sys/init', reply: { ...answer, keys: ['aa'], keys_base64: ['qq=='], keychain: true } }],
    );
    expect(r.client.sent[0]!.body).toEqual({ keychain: true });
    expect(JSON.parse(r.stdout)).toMatchObject({
      unseal_keys_b64: ['qq=='],
      unseal_keys_hex: ['aa'],
      unseal_shares: 1,
      unseal_threshold: 1,
      root_token: 'hvs.root',
      recovery_key: 'qq==',
    });
  });

  it('--status exits 0 when initialised and 2 when not', async () => {
    const yes = await runCli(
      ['operator', 'init', '--status'],
      [{ method: 'GET', path: 'sys/init', reply: { initialized: true } }],
    );
    expect([yes.status, yes.stdout]).toEqual([0, 'keyhold is initialized\n']);
    const no = await runCli(
      ['operator', 'init', '--status'],
      [{ method: 'GET', path: 'sys/init', reply: { initialized: false } }],
    );
    expect([no.status, no.stdout]).toEqual([2, 'keyhold is not initialized\n']);
  });

  it('refuses a share count that is not a whole number (usage error, exit 1, nothing sent)', async () => {
    const r = await runCli(['operator', 'init', '--key-shares', 'three']);
    expect(r.status).toBe(1);
    expect(r.client.sent).toEqual([]);
  });
});

describe('status', () => {
  it('exits 2 when sealed and does not ask for the leader', async () => {
    const r = await runCli(
      ['status', '--format', 'json'],
      [{ method: 'GET', path: 'sys/seal-status', reply: { sealed: true, initialized: true } }],
    );
    expect(r.status).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({ sealed: true, initialized: true });
    r.client.done();
  });
});
