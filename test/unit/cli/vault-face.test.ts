/**
 * The vault face (issue 34) in process: the face picked from the program's name, the vault CLI's
 * envelope, -field lookup and table (secret-output.ts), boolean flags with a value, `write PATH -`,
 * and the vault command list run through the real adapter against a scripted fake client.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeArgv } from '../../../src/cli/argv.js';
import { boolFlagValues } from '../../../src/cli/bool-values.js';
import type { IO } from '../../../src/cli/command.js';
import { createContext } from '../../../src/cli/context.js';
import { faceOf } from '../../../src/cli/face.js';
import { buildProgram } from '../../../src/cli/program.js';
import { envelope, goValue, humanDuration, rawField, secretTable } from '../../../src/cli/secret-output.js';
import { VAULT_COMMANDS, vaultEntries } from '../../../src/cli/vault/commands/index.js';
import { applyVaultEnv } from '../../../src/cli/vault/env.js';
import { buildVaultProgramFor } from '../../../src/cli/vault/program.js';
import { exitCodeOf } from '../../../src/main.js';
import { FakeClient, type Exchange } from './harness.js';

/** Run `vault ARGV...` in process against `script`. */
async function runVault(argv: string[], script: Exchange[] = [], stdin = '') {
  let out = '';
  let err = '';
  const client = new FakeClient(script);
  const io: IO = {
    stdout: { write: (d: string | Uint8Array) => ((out += Buffer.from(d).toString('utf8')), true) },
    stderr: { write: (d: string | Uint8Array) => ((err += Buffer.from(d).toString('utf8')), true) },
    stdin: async () => Buffer.from(stdin),
    stdinIsTTY: false,
  };
  let status = 0;
  const words = normalizeArgv(argv);
  const program = await buildVaultProgramFor(words, { io, makeClient: () => client, exit: (n) => (status = n) });
  program.configureOutput({
    writeOut: (s) => io.stdout.write(s),
    writeErr: (s) => io.stderr.write(s),
    outputError: (s) => io.stderr.write(s),
  });
  try {
    await program.parseAsync(boolFlagValues(program, words), { from: 'user' });
  } catch (e) {
    status = exitCodeOf(e);
    if (!(e instanceof Error && e.constructor.name === 'CommanderError')) err += String((e as Error).message);
  }
  return { stdout: out, stderr: err, status, client };
}

describe('the face from the program name', () => {
  it('is vault for vault, vault.js, vault.cjs and keyhold otherwise', () => {
    expect(faceOf('/usr/local/bin/vault')).toBe('vault');
    expect(faceOf('C:\\tools\\vault.exe')).toBe('vault');
    expect(faceOf('/opt/x/vault.cjs')).toBe('vault');
    expect(faceOf('/usr/bin/keyhold')).toBe('keyhold');
    expect(faceOf('/usr/bin/vaultwarden')).toBe('keyhold');
    expect(faceOf(undefined)).toBe('keyhold');
  });

  it('lets VAULT_* win over KEYHOLD_*', () => {
    const env: NodeJS.ProcessEnv = {
      VAULT_ADDR: 'http://v:8200',
      KEYHOLD_ADDR: 'unix:///k.sock',
      KEYHOLD_TOKEN: 'k-token',
      VAULT_CACERT: '/ca.pem',
    };
    applyVaultEnv(env);
    expect(env).toMatchObject({ KEYHOLD_ADDR: 'http://v:8200', KEYHOLD_TOKEN: 'k-token', KEYHOLD_CACERT: '/ca.pem' });
  });
});

describe('the vault CLI output of an answer', () => {
  const login = {
    request_id: 'r1',
    lease_id: '',
    lease_duration: 0,
    renewable: false,
    data: null,
    warnings: null,
    auth: {
      client_token: 'hvs.t',
      accessor: 'acc',
      policies: ['default', 'ci'],
      token_policies: ['default', 'ci'],
      metadata: { role_name: 'ci' },
      lease_duration: 1200,
      renewable: true,
    },
  };

  it('envelope: the api.Secret fields in order, auth and wrap_info only when present', () => {
    expect(Object.keys(envelope({ data: { a: 1 }, request_id: 'x' }))).toEqual([
      'request_id',
      'lease_id',
      'lease_duration',
      'renewable',
      'data',
      'warnings',
    ]);
    expect(envelope(login).auth).toEqual(login.auth);
    expect(envelope({ wrap_info: { token: 'w' }, mount_type: 'kv' })).toMatchObject({
      wrap_info: { token: 'w' },
      mount_type: 'kv',
      data: null,
    });
  });

  it('a raw answer (fields at the top level) is the data', () => {
    expect(envelope({ sealed: false, t: 1 })).toMatchObject({ data: { sealed: false, t: 1 }, request_id: '' });
    expect(rawField({ sealed: false, t: 1 }, 't')).toBe(1);
    expect(secretTable({ sealed: false })).toMatch(/^sealed\s+false$/m);
  });

  it('-field reads auth, wrap_info, top-level and data fields', () => {
    expect(rawField(login, 'token')).toBe('hvs.t');
    expect(rawField(login, 'token_accessor')).toBe('acc');
    expect(rawField(login, 'token_duration')).toBe(1200);
    expect(rawField(login, 'token_policies')).toEqual(['default', 'ci']);
    expect(rawField({ wrap_info: { token: 'w', ttl: 60 } }, 'wrapping_token')).toBe('w');
    expect(rawField({ request_id: 'q', data: { a: 'b', n: { x: [1, 2] } } }, 'request_id')).toBe('q');
    expect(rawField({ data: { a: 'b' } }, 'a')).toBe('b');
    expect(rawField({ data: { n: { x: [1, 2] } } }, 'n.x.1')).toBe(2);
    expect(rawField({ data: { a: 'b' } }, 'nope')).toBeUndefined();
  });

  it('prints values and durations as Go does', () => {
    expect(goValue(['a', 'b'])).toBe('[a b]');
    expect(goValue({ version: '1' })).toBe('map[version:1]');
    expect(goValue(null)).toBe('<nil>');
    expect(humanDuration(2764800)).toBe('768h');
    expect(humanDuration(90)).toBe('1m30s');
    expect(humanDuration(0)).toBe('0s');
  });

  it('the table lists token rows, token_meta_* and sorted data rows', () => {
    const t = secretTable(login).split('\n');
    expect(t[0]).toMatch(/^Key\s+Value$/);
    expect(t).toContain('token                   hvs.t');
    expect(t).toContain('token_duration          20m');
    expect(t).toContain('token_policies          ["default" "ci"]');
    expect(t).toContain('token_meta_role_name    ci');
    const data = secretTable({ lease_duration: 2764800, data: { ttl: 3600, b: 'x', a: [1] } }).split('\n');
    expect(data.slice(2, 6)).toEqual([
      'refresh_interval    768h',
      'a                   [1]',
      'b                   x',
      'ttl                 1h',
    ]);
  });
});

describe('boolean flags with a value (both faces)', () => {
  it('-orphan=true is the switch, -no-default-policy=false drops it, a value flag is left alone', () => {
    const program = buildProgram();
    const words = normalizeArgv([
      'token',
      'create',
      '-orphan=true',
      '-no-default-policy=false',
      '-ttl=1h',
      '-renewable=false',
    ]);
    expect(boolFlagValues(program, words)).toEqual(['token', 'create', '--orphan', '--ttl=1h', '--renewable=false']);
    expect(
      boolFlagValues(program, normalizeArgv(['token', 'create', '-orphan=false', '-no-default-policy=true'])),
    ).toEqual(['token', 'create', '--no-default-policy']);
  });

  it("a command's own --version <n> is not the program's --version switch", () => {
    const program = buildProgram();
    expect(boolFlagValues(program, normalizeArgv(['kv', 'get', '-version=1', 'secret/x']))).toEqual([
      'kv',
      'get',
      '--version=1',
      'secret/x',
    ]);
  });
});

describe('write PATH - and @file.json (both faces)', () => {
  it('merges a JSON object from stdin or a file; refuses what is not an object', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keyhold-pairs-'));
    writeFileSync(join(dir, 'b.json'), '{"b": 2}');
    const ctx = createContext({ stdin: async () => Buffer.from('{"a": {"x": 1}}\n'), stdinIsTTY: false });
    expect(await ctx.parsePairs(['-', `@${join(dir, 'b.json')}`, 'c=3'])).toEqual({ a: { x: 1 }, b: 2, c: '3' });
    const bad = createContext({ stdin: async () => Buffer.from('[1]'), stdinIsTTY: false });
    await expect(bad.parsePairs(['-'])).rejects.toThrow('JSON input from stdin must be an object');
  });
});

describe('the vault command list', () => {
  it("replaces keyhold's commands of the same words and adds the vault CLI's others", () => {
    const keyhold = [
      { words: ['secrets', 'enable'], summary: 'keyhold', run: () => undefined },
      { words: ['kv', 'get'], summary: 'kv', run: () => undefined },
    ];
    const merged = vaultEntries(keyhold);
    expect(merged[0]!.summary).toMatch(/KV version 1/);
    expect(merged[1]!.summary).toBe('kv');
    const words = merged.map((e) => e.words.join(' '));
    for (const w of [
      'secrets tune',
      'token renew',
      'token capabilities',
      'print token',
      'kv rollback',
      'kv enable-versioning',
      'lease lookup',
      'lease renew',
      'lease revoke',
    ])
      expect(words).toContain(w);
    expect(new Set(VAULT_COMMANDS.map((e) => e.words.join(' '))).size).toBe(VAULT_COMMANDS.length);
  });

  it('secrets enable kv sends no version (KV v1, the server default); -version=2 and kv-v2 ask for v2', async () => {
    const v1 = await runVault(['secrets', 'enable', 'kv'], [{ method: 'POST', path: 'sys/mounts/kv' }]);
    expect(v1.status).toBe(0);
    expect(v1.client.sent[0]!.body).toEqual({ type: 'kv', description: '', local: false, seal_wrap: false });
    const v2 = await runVault(
      ['secrets', 'enable', '-path=team', '-version=2', 'kv'],
      [{ method: 'POST', path: 'sys/mounts/team' }],
    );
    expect(v2.client.sent[0]!.body).toMatchObject({ type: 'kv', options: { version: '2' } });
    const kv2 = await runVault(['secrets', 'enable', 'kv-v2'], [{ method: 'POST', path: 'sys/mounts/kv-v2' }]);
    expect(kv2.client.sent[0]!.body).toMatchObject({ type: 'kv-v2' });
    expect(kv2.stdout).toContain('Success! Enabled the kv-v2 secrets engine at: kv-v2/');
  });

  it('operator init defaults to 5 shares and a threshold of 3, without the keychain', async () => {
    const keys = ['k1', 'k2', 'k3', 'k4', 'k5'];
    const r = await runVault(
      ['operator', 'init'],
      [{ method: 'POST', path: 'sys/init', reply: { keys, keys_base64: keys, root_token: 'hvs.root' } }],
    );
    expect(r.client.sent[0]!.body).toEqual({ keychain: false, secret_shares: 5, secret_threshold: 3 });
    expect(r.stdout.split('\n').slice(0, 5)).toEqual(keys.map((k, i) => `Unseal Key ${i + 1}: ${k}`));
    expect(r.stdout).toContain('Initial Root Token: hvs.root');
    const one = await runVault(
      ['operator', 'init', '-key-shares=1', '-key-threshold=1', '-format=json'],
      [{ method: 'POST', path: 'sys/init', reply: { keys: ['a'], keys_base64: ['a'], root_token: 'hvs.r' } }],
    );
    expect(JSON.parse(one.stdout)).toMatchObject({
      unseal_keys_b64: ['a'],
      unseal_shares: 1,
      unseal_threshold: 1,
      root_token: 'hvs.r',
    });
  });

  it('operator unseal KEY takes the key with one warning and prints the seal status', async () => {
    const r = await runVault(
      ['operator', 'unseal', 'share-1'],
      [
        {
          method: 'POST',
          path: 'sys/unseal',
          reply: { type: 'shamir', initialized: true, sealed: true, t: 3, n: 5, progress: 1, nonce: 'n1' },
        },
      ],
    );
    expect(r.status).toBe(0);
    expect(r.client.sent[0]!.body).toEqual({ key: 'share-1' });
    expect(r.stderr.split('\n').filter((l) => l.startsWith('WARNING!'))).toHaveLength(1);
    expect(r.stdout).toMatch(/^Unseal Progress\s+1\/3$/m);
    expect(r.stdout).toMatch(/^Total Shares\s+5$/m);
  });

  it('audit enable drops log_raw=true with one warning', async () => {
    const r = await runVault(
      ['audit', 'enable', 'file', 'file_path=/tmp/a.log', 'log_raw=true'],
      [{ method: 'POST', path: 'sys/audit/file' }],
    );
    expect(r.status).toBe(0);
    expect(r.client.sent[0]!.body).toMatchObject({ type: 'file', options: { file_path: '/tmp/a.log' } });
    expect((r.client.sent[0]!.body as { options: object }).options).not.toHaveProperty('log_raw');
    expect(r.stderr).toMatch(/^WARNING! log_raw=true ignored: /m);
  });

  it('token capabilities, token renew, kv enable-versioning, secrets tune, lease revoke -prefix', async () => {
    const caps = await runVault(
      ['token', 'capabilities', 'secret/data/x'],
      [
        {
          method: 'POST',
          path: 'sys/capabilities-self',
          reply: { data: { capabilities: ['update', 'read'], 'secret/data/x': ['update', 'read'] } },
        },
      ],
    );
    expect(caps.stdout).toBe('read, update\n');
    expect(caps.client.sent[0]!.body).toEqual({ paths: ['secret/data/x'] });
    const renew = await runVault(
      ['token', 'renew', '-increment=30m', '-format=json'],
      [
        {
          method: 'POST',
          path: 'auth/token/renew-self',
          reply: { auth: { client_token: 'hvs.s', lease_duration: 1800 } },
        },
      ],
    );
    expect(renew.client.sent[0]!.body).toEqual({ increment: '30m' });
    expect(JSON.parse(renew.stdout).auth.client_token).toBe('hvs.s');
    const ev = await runVault(
      ['kv', 'enable-versioning', 'secret/'],
      [{ method: 'POST', path: 'sys/mounts/secret/tune' }],
    );
    expect(ev.client.sent[0]!.body).toEqual({ options: { version: '2' } });
    const tune = await runVault(
      ['secrets', 'tune', '-description=d', '-options=version=2', 'kv/'],
      [{ method: 'POST', path: 'sys/mounts/kv/tune' }],
    );
    expect(tune.client.sent[0]!.body).toEqual({ options: { version: '2' }, description: 'd' });
    const rev = await runVault(
      ['lease', 'revoke', '-prefix', 'db/creds/'],
      [{ method: 'POST', path: 'sys/leases/revoke-prefix/db/creds/' }],
    );
    expect(rev.status).toBe(0);
  });

  it('write -field=token reads the auth block; a missing field exits 1', async () => {
    const answer = { auth: { client_token: 'hvs.login', policies: ['default'] } };
    const ok = await runVault(
      ['write', '-field=token', 'auth/approle/login', 'role_id=r', 'secret_id=s'],
      [{ method: 'POST', path: 'auth/approle/login', reply: answer }],
    );
    expect(ok.stdout).toBe('hvs.login');
    const missing = await runVault(
      ['write', '-field=nope', 'auth/approle/login', 'role_id=r'],
      [{ method: 'POST', path: 'auth/approle/login', reply: answer }],
    );
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('Field "nope" not present in secret');
  });

  it('secrets list -detailed and auth list -detailed print the detailed columns (-detailed is global in vault)', async () => {
    const mounts = {
      data: {
        'secret/': {
          type: 'kv',
          accessor: 'kv_1',
          description: 'key/value secret storage',
          config: { default_lease_ttl: 3600, max_lease_ttl: 0, force_no_cache: false },
          local: false,
          seal_wrap: false,
          external_entropy_access: false,
          options: { version: '2' },
          uuid: 'u-1',
        },
      },
    };
    const s = await runVault(['secrets', 'list', '-detailed'], [{ method: 'GET', path: 'sys/mounts', reply: mounts }]);
    expect(s.status, s.stderr).toBe(0);
    const [head, , row] = s.stdout.split('\n');
    expect(head!.split(/\s{2,}/)).toEqual([
      'Path',
      'Plugin',
      'Accessor',
      'Default TTL',
      'Max TTL',
      'Force No Cache',
      'Replication',
      'Seal Wrap',
      'External Entropy Access',
      'Options',
      'Description',
      'UUID',
    ]);
    expect(row!.split(/\s{2,}/)).toEqual([
      'secret/',
      'kv',
      'kv_1',
      '1h',
      'system',
      'false',
      'replicated',
      'false',
      'false',
      'map[version:2]',
      'key/value secret storage',
      'u-1',
    ]);
    const plain = await runVault(['secrets', 'list'], [{ method: 'GET', path: 'sys/mounts', reply: mounts }]);
    expect(plain.stdout.split('\n')[0]!.split(/\s{2,}/)).toEqual(['Path', 'Type', 'Accessor', 'Description']);
    const auth = await runVault(
      ['auth', 'list', '-detailed'],
      [
        {
          method: 'GET',
          path: 'sys/auth',
          reply: {
            data: {
              'token/': { type: 'token', accessor: 'a', description: 'd', config: { token_type: 'default-service' } },
            },
          },
        },
      ],
    );
    expect(auth.stdout.split('\n')[0]!.split(/\s{2,}/)).toContain('Token Type');
  });
});
