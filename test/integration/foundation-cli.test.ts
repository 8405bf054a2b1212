import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { BIN, cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;
let work: string;
/** The CLI with output kept byte for byte (trailing newlines matter here). */
const cli = (args: string[], o: Parameters<Daemon['cli']>[1] = {}) => d.cli(args, { ...o, keepNewline: true });
beforeAll(async () => {
  d = await startDaemon({ tcp: true });
  work = mkdtempSync(join(tmpdir(), 'keyhold-cli-'));
});
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
  if (work) cleanup(work);
});

const POLICY = 'path "secret/data/app" {\n  capabilities = ["read"]\n}\n';
/** Run the CLI with no address or token from the environment unless given. */
const bare = (args: string[], env: Record<string, string | undefined> = {}, input?: string) =>
  d.cli(args, {
    input,
    keepNewline: true,
    env: {
      KEYHOLD_ADDR: undefined,
      KEYHOLD_TOKEN: undefined,
      VAULT_ADDR: undefined,
      VAULT_TOKEN: undefined,
      KEYHOLD_HOME: join(work, 'nohome'),
      ...env,
    },
  });

describe('CLI: where the daemon is', () => {
  it('uses --address, then KEYHOLD_ADDR, then VAULT_ADDR, with unix:// and http:// addresses', async () => {
    const good = d.addr;
    const bad = 'unix:///nonexistent/keyhold.sock';
    // The full precedence table is unit-tested (test/unit/cli); here each source once, for real.
    const cases: Array<[string[], Record<string, string>, number]> = [
      [['--address', good], { KEYHOLD_ADDR: bad, VAULT_ADDR: bad }, 0],
      [[], { KEYHOLD_ADDR: good, VAULT_ADDR: bad }, 0],
      [[], { VAULT_ADDR: d.tcp! }, 0],
      [[], { KEYHOLD_ADDR: bad, VAULT_ADDR: good }, 1],
    ];
    for (const [flags, env, code] of cases) {
      const r = await bare([...flags, 'read', 'sys/mounts', '--format', 'json'], { ...env, KEYHOLD_TOKEN: 'root' });
      expect(r.exitCode, `${flags.join(' ')} ${JSON.stringify(env)}: ${r.stderr}`).toBe(code);
      if (code === 0) expect(JSON.parse(r.stdout).data['transit/'].type).toBe('transit');
      else
        expect(r.stderr).toMatch(
          /^Error: cannot reach keyhold at unix:\/\/\/nonexistent\/keyhold\.sock: is the daemon running\?/,
        );
    }
  });

  it('falls back to the default socket under KEYHOLD_HOME', async () => {
    const home = join(work, 'home-default');
    mkdirSync(join(home, 'run'), { recursive: true });
    symlinkSync(d.socket, join(home, 'run', 'keyhold.sock'));
    const r = await bare(['read', 'sys/mounts', '--field', 'transit/.type'], {
      KEYHOLD_HOME: home,
      KEYHOLD_TOKEN: 'root',
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('transit');
  });

  it('refuses an address of another scheme with exit 1', async () => {
    const r = await bare(['status'], { KEYHOLD_ADDR: 'ftp://127.0.0.1:1' });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe('Error: invalid address "ftp://127.0.0.1:1": use unix:///path or http(s)://host:port\n');
  });
});

describe('CLI: which token', () => {
  it('uses --token, then KEYHOLD_TOKEN, then VAULT_TOKEN', async () => {
    const cases: Array<[string[], Record<string, string>, number]> = [
      [['--token', 'root'], { KEYHOLD_TOKEN: 'bad', VAULT_TOKEN: 'bad' }, 0],
      [[], { KEYHOLD_TOKEN: 'root', VAULT_TOKEN: 'bad' }, 0],
      [[], { VAULT_TOKEN: 'root' }, 0],
      [[], {}, 2],
    ];
    for (const [flags, env, code] of cases) {
      const r = await bare([...flags, 'read', 'sys/mounts'], { ...env, KEYHOLD_ADDR: d.addr });
      expect(r.exitCode, `${flags.join(' ')} ${JSON.stringify(env)}`).toBe(code);
      if (code === 2) expect(r.stderr).toBe('Error: permission denied (HTTP 403: GET sys/mounts)\n');
    }
  });

  it('login saves a token from stdin in a 0600 file that later commands use; a bad token is not saved', async () => {
    const home = join(work, 'home-login');
    const made = await cli(['token', 'create', '--policy', 'default', '--field', 'token']);
    const t = made.stdout;
    expect(t).toMatch(/^hvs\.[A-Za-z0-9]{24}$/);
    const bad = await bare(['login'], { KEYHOLD_HOME: home, KEYHOLD_ADDR: d.addr }, 'hvs.wrong\n');
    expect(bad.exitCode).toBe(2);
    expect(existsSync(join(home, 'token'))).toBe(false);
    const ok = await bare(['login'], { KEYHOLD_HOME: home, KEYHOLD_ADDR: d.addr }, t + '\n');
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stderr).toMatch(/^Success! Token saved to .*token \(policies: default\)\n$/);
    expect(ok.stdout).toBe('');
    expect(statSync(join(home, 'token')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(home, 'token'), 'utf8').trim()).toBe(t);
    const who = await bare(['token', 'lookup', '--format', 'json'], { KEYHOLD_HOME: home, KEYHOLD_ADDR: d.addr });
    expect(who.exitCode, who.stderr).toBe(0);
    expect(JSON.parse(who.stdout).data.id).toBe(t); // the vault envelope (issue 34 item 1)
    // The environment still wins over the saved token.
    const env = await bare(['token', 'lookup', '--field', 'policies'], {
      KEYHOLD_HOME: home,
      KEYHOLD_ADDR: d.addr,
      KEYHOLD_TOKEN: 'root',
    });
    expect(env.stdout).toBe('["root"]');
  });
});

describe('CLI: generic read, write, list, delete', () => {
  it('writes with k=@file, k=- and k=v, and reads back with every format', async () => {
    const f = join(work, 'p.hcl');
    writeFileSync(f, POLICY);
    const w1 = await cli(['write', 'sys/policies/acl/cli-file', `policy=@${f}`]);
    expect(w1.exitCode, w1.stderr).toBe(0);
    expect(w1.stderr).toBe('Success! Data written to: sys/policies/acl/cli-file\n');
    expect((await cli(['write', 'sys/policies/acl/cli-stdin', 'policy=-'], { input: POLICY })).exitCode).toBe(0);
    expect(
      (await cli(['write', 'sys/policies/acl/cli-inline', 'policy=path "x" { capabilities = ["read"] }'])).exitCode,
    ).toBe(0);

    const field = await cli(['read', 'sys/policies/acl/cli-file', '--field', 'policy']);
    expect(field.stdoutBuffer.equals(Buffer.from(POLICY))).toBe(true);
    // k=- strips one trailing newline, like `vault write k=-`.
    expect((await cli(['read', 'sys/policies/acl/cli-stdin', '--field', 'policy'])).stdout).toBe(
      POLICY.replace(/\n$/, ''),
    );
    // json/yaml: the whole envelope, as `vault read -format=json` (issue 34 item 1).
    const json = JSON.parse((await cli(['read', 'sys/policies/acl/cli-inline', '--format', 'json'])).stdout);
    expect(json.data).toEqual({ name: 'cli-inline', policy: 'path "x" { capabilities = ["read"] }' });
    expect(Object.keys(json)).toEqual(
      expect.arrayContaining(['request_id', 'lease_id', 'lease_duration', 'renewable', 'data', 'warnings']),
    );
    const yaml = parseYaml((await cli(['read', 'sys/policies/acl/cli-inline', '--format', 'yaml'])).stdout);
    expect(yaml.data).toEqual(json.data);
    const tableOut = (await cli(['read', 'sys/policies/acl/cli-inline'])).stdout;
    expect(tableOut.split('\n').slice(0, 3)).toEqual(['Key       Value', '---       -----', 'name      cli-inline']);
    expect(JSON.parse((await cli(['read', 'sys/policies/acl/cli-inline', '--format', 'raw'])).stdout)).toEqual(
      json.data,
    );
  });

  it('lists with a Keys column or a JSON array, and deletes', async () => {
    const l = await cli(['list', 'sys/policies/acl']);
    expect(l.exitCode).toBe(0);
    expect(l.stdout.split('\n').slice(0, 2)).toEqual(['Keys', expect.stringMatching(/^-+$/)]);
    expect(l.stdout).toMatch(/^cli-file$/m);
    const arr = JSON.parse((await cli(['list', 'sys/policies/acl', '--format', 'json'])).stdout);
    expect(arr).toEqual(expect.arrayContaining(['cli-file', 'default', 'root']));
    const del = await cli(['delete', 'sys/policies/acl/cli-file']);
    expect(del.exitCode).toBe(0);
    expect(del.stderr).toBe('Success! Data deleted (if it existed) at: sys/policies/acl/cli-file\n');
    const gone = await cli(['read', 'sys/policies/acl/cli-file']);
    expect(gone.exitCode).toBe(2);
    expect(gone.stdout).toBe('');
    expect(gone.stderr).toBe(
      'Error: No value found at sys/policies/acl/cli-file (HTTP 404: GET sys/policies/acl/cli-file)\n',
    );
  });

  it('fails locally (exit 1) on a bad pair or an unreadable @file, and on usage errors, with one line', async () => {
    for (const [args, msg] of [
      [['write', 'sys/policies/acl/x', 'novalue'], 'Error: expected key=value, got "novalue"\n'],
      [
        ['write', 'sys/policies/acl/x', `policy=@${join(work, 'missing.hcl')}`],
        `Error: cannot read ${join(work, 'missing.hcl')}: ENOENT\n`,
      ],
      [['bogus'], "Error: unknown command 'bogus' (see keyhold --help)\n"],
      [['read'], "Error: missing required argument 'path' (see keyhold --help)\n"],
      [['read', 'x', '--nope'], "Error: unknown option '--nope' (see keyhold --help)\n"],
      [
        ['--format', 'xml', 'read', 'x'],
        expect.stringMatching(
          /^Error: option '--format <format>' argument 'xml' is invalid\. Allowed choices are table, json, yaml, raw, dotenv, shell, jwk, jwks, pem\. \(see keyhold --help\)\n$/,
        ),
      ],
    ] as const) {
      const r = await cli([...args]);
      expect(r.exitCode, args.join(' ')).toBe(1);
      expect(r.stderr).toEqual(msg);
      expect(r.stdout).toBe('');
    }
  });

  it('prints help and the version with exit 0', async () => {
    const h = await cli(['--help']);
    expect(h.exitCode).toBe(0);
    expect(h.stdout).toMatch(/^Usage: keyhold/);
    const v = await cli(['--version']);
    expect(v.exitCode).toBe(0);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('CLI: status, token, policy, secrets', () => {
  it('shows status and exits 0 when unsealed', async () => {
    const r = await cli(['status', '--format', 'json']);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      initialized: true,
      sealed: false,
      storage_type: 'inmem',
      version: expect.any(String),
    });
    expect((await cli(['status'])).stdout).toMatch(/^sealed\s+false$/m);
  });

  it('creates, looks up and revokes tokens', async () => {
    const c = await cli([
      'token',
      'create',
      '--policy',
      'default',
      '--ttl',
      '1h',
      '--num-uses',
      '5',
      '--format',
      'json',
    ]);
    expect(c.exitCode, c.stderr).toBe(0);
    // The vault envelope (issue 34 item 1): the token is .auth.client_token.
    const auth = JSON.parse(c.stdout).auth;
    expect(auth).toMatchObject({ lease_duration: 3600, policies: ['default'], renewable: true });
    const made = { token: auth.client_token as string, token_accessor: auth.accessor as string };
    const self = await cli(['token', 'lookup', '--format', 'json'], { token: made.token });
    expect(JSON.parse(self.stdout).data).toMatchObject({ id: made.token, num_uses: 4, policies: ['default'] });
    const byStdin = await cli(['token', 'lookup', '-', '--field', 'accessor'], { input: made.token });
    expect(byStdin.stdout).toBe(made.token_accessor);
    const byAcc = await cli(['token', 'lookup', '--accessor', made.token_accessor, '--field', 'ttl']);
    expect(Number(byAcc.stdout)).toBeGreaterThan(3500);
    const rev = await cli(['token', 'revoke', '-'], { input: made.token + '\n' });
    expect(rev.exitCode).toBe(0);
    expect(rev.stderr).toBe('Success! Revoked token (if it existed)\n');
    expect((await cli(['token', 'lookup'], { token: made.token })).exitCode).toBe(2);
    const other = (await cli(['token', 'create', '--policies', 'default', '--field', 'token'])).stdout;
    expect((await cli(['token', 'revoke', '--self'], { token: other })).exitCode).toBe(0);
    expect((await cli(['token', 'lookup'], { token: other })).exitCode).toBe(2);
    expect((await cli(['token', 'revoke'])).exitCode).toBe(1);
  });

  it('writes, reads, lists and deletes policies; a bad policy is a server error naming the cause', async () => {
    const f = join(work, 'team.hcl');
    writeFileSync(f, POLICY);
    const w = await cli(['policy', 'write', 'team', f]);
    expect(w.exitCode, w.stderr).toBe(0);
    expect(w.stderr).toBe('Success! Uploaded policy: team\n');
    expect(
      (
        await cli(['policy', 'write', 'team-json', '-'], {
          input: JSON.stringify({ path: { 'a/*': { capabilities: ['list'] } } }),
        })
      ).exitCode,
    ).toBe(0);
    expect((await cli(['policy', 'read', 'team'])).stdout).toBe(POLICY + '\n');
    expect(JSON.parse((await cli(['policy', 'list', '--format', 'json'])).stdout)).toEqual(
      expect.arrayContaining(['team', 'team-json']),
    );
    const bad = await cli(['policy', 'write', 'broken', '-'], { input: 'path "a" { capabilities = ["fly"] }' });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(
      /^Error: failed to parse policy: path "a": invalid capability "fly" \(HTTP 400: POST sys\/policies\/acl\/broken\)\n$/,
    );
    expect((await cli(['policy', 'delete', 'team'])).exitCode).toBe(0);
    expect((await cli(['policy', 'read', 'team'])).exitCode).toBe(2);
  });

  it('enables, lists and disables secrets engines (with --version 2 for kv)', async () => {
    const t = await cli(['secrets', 'enable', '--path', 'cli-pay', 'transit']);
    expect(t.exitCode, t.stderr).toBe(0);
    expect(t.stderr).toBe('Success! Enabled the transit secrets engine at: cli-pay/\n');
    const kv = await cli(['secrets', 'enable', '--path', 'cli-kv', '--version', '2', 'kv']);
    expect(kv.exitCode, kv.stderr).toBe(0);
    const dup = await cli(['secrets', 'enable', 'transit']);
    expect(dup.exitCode).toBe(2);
    expect(dup.stderr).toMatch(/already in use at transit\//);
    const list = await cli(['secrets', 'list']);
    expect(list.stdout.split('\n')[0]).toMatch(/^Path\s+Type\s+Accessor\s+Description$/);
    expect(list.stdout).toMatch(/^cli-pay\/\s+transit\s+transit_[0-9a-f]{8}$/m);
    const json = JSON.parse((await cli(['secrets', 'list', '--format', 'json'])).stdout);
    expect(json['cli-kv/']).toMatchObject({ type: 'kv', options: { version: '2' } });
    expect((await cli(['secrets', 'disable', 'cli-pay'])).exitCode).toBe(0);
    expect(JSON.parse((await cli(['secrets', 'list', '--format', 'json'])).stdout)['cli-pay/']).toBeUndefined();
  });
});

// script(1) gives the CLI a real TTY, to check colour is used there and nowhere else.
const hasScript = spawnSync('script', ['--version']).status === 0;
describe.skipIf(!hasScript)('CLI: colour', () => {
  const onTty = (env: Record<string, string>) => {
    const cmd = `${process.execPath} ${BIN} read sys/no-such-path`;
    return execFileSync('script', ['-qec', cmd, '/dev/null'], {
      env: {
        PATH: process.env.PATH,
        KEYHOLD_ADDR: d.addr,
        KEYHOLD_TOKEN: 'root',
        KEYHOLD_HOME: work,
        TERM: 'xterm',
        ...env,
      },
      encoding: 'utf8',
    });
  };

  it('colours errors on a TTY', () => {
    let out = '';
    try {
      out = onTty({});
    } catch (e) {
      out = String((e as { stdout?: string }).stdout ?? '');
    }
    expect(out).toContain('\u001b[31mError: unsupported path');
  });

  it('never colours with NO_COLOR, or when not on a TTY', async () => {
    let out = '';
    try {
      out = onTty({ NO_COLOR: '1' });
    } catch (e) {
      out = String((e as { stdout?: string }).stdout ?? '');
    }
    expect(out).toContain('Error: unsupported path');
    expect(out).not.toContain('\u001b[');
    const piped = await cli(['read', 'sys/no-such-path'], { env: { NO_COLOR: undefined } });
    expect(piped.stderr).not.toContain('\u001b[');
  });
});
