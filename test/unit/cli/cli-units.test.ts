import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { LocalError, ServerError, resolveAddress, resolveToken } from '../../../src/cli/client.js';
import { grid, paint, printData, table, useColor } from '../../../src/cli/output.js';
import { errorLine, exitCodeOf, joinVersionValues } from '../../../src/main.js';
import { createContext } from '../../../src/cli/context.js';
import { usageErrorLine } from '../../../src/cli/program.js';
import { CommanderError } from 'commander';

const home = mkdtempSync(join(tmpdir(), 'keyhold-cli-unit-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('address and token resolution', () => {
  it('takes the address from the flag, then KEYHOLD_ADDR, then VAULT_ADDR, then the default socket', () => {
    const env = { KEYHOLD_HOME: home, KEYHOLD_ADDR: 'http://k:1', VAULT_ADDR: 'http://v:2' };
    expect(resolveAddress({ address: 'unix:///f.sock', env })).toBe('unix:///f.sock');
    expect(resolveAddress({ env })).toBe('http://k:1');
    expect(resolveAddress({ env: { ...env, KEYHOLD_ADDR: undefined } })).toBe('http://v:2');
    expect(resolveAddress({ env: { KEYHOLD_HOME: home } })).toBe(`unix://${home}/run/keyhold.sock`);
    expect(resolveAddress({ env: { XDG_RUNTIME_DIR: '/run/user/7', HOME: '/h' } })).toBe(
      'unix:///run/user/7/keyhold/keyhold.sock',
    );
    expect(resolveAddress({ address: '/tmp/bare.sock', env })).toBe('unix:///tmp/bare.sock');
    // An empty variable counts as unset.
    expect(resolveAddress({ env: { ...env, KEYHOLD_ADDR: '' } })).toBe('http://v:2');
  });

  it('takes the token from the flag, then KEYHOLD_TOKEN, then VAULT_TOKEN, then the login file', () => {
    writeFileSync(join(home, 'token'), 'from-file\n', { mode: 0o600 });
    const env = { KEYHOLD_HOME: home, KEYHOLD_TOKEN: 'k', VAULT_TOKEN: 'v' };
    expect(resolveToken({ token: 'flag', env })).toBe('flag');
    expect(resolveToken({ env })).toBe('k');
    expect(resolveToken({ env: { ...env, KEYHOLD_TOKEN: undefined } })).toBe('v');
    expect(resolveToken({ env: { KEYHOLD_HOME: home } })).toBe('from-file');
    expect(resolveToken({ env: { KEYHOLD_HOME: join(home, 'nowhere') } })).toBeUndefined();
  });
});

describe('output formats', () => {
  const data = { b: 2, a: 'x', nested: { k: [1, 2] }, none: null };
  const capture = async (opts: Parameters<typeof printData>[1], value: unknown = data) => {
    let out = '';
    await printData(value, opts, (s) => (out += s));
    return out;
  };

  it('prints a sorted Key/Value table by default', async () => {
    expect(await capture({})).toBe(table(data));
    expect((await capture({})).split('\n').slice(0, 3)).toEqual(['Key       Value', '---       -----', 'a         x']);
    expect(await capture({})).toContain('nested    {"k":[1,2]}');
    expect(await capture({})).toContain('none      n/a');
  });

  it('prints a LIST answer as a Keys column, like `vault list`, and a one-key object that is not a list as a table', async () => {
    expect(await capture({}, { keys: ['a', 'b/'] })).toBe('Keys\n----\na\nb/\n');
    expect(await capture({}, { keys: 'not-a-list' })).toBe(table({ keys: 'not-a-list' }));
    expect(JSON.parse(await capture({ format: 'json' }, { keys: ['a'] }))).toEqual({ keys: ['a'] });
  });

  it('prints JSON and YAML that parse back to the data', async () => {
    expect(JSON.parse(await capture({ format: 'json' }))).toEqual(data);
    expect(parseYaml(await capture({ format: 'yaml' }))).toEqual(data);
  });

  it('prints one raw field without a newline, and fails naming a missing field', async () => {
    expect(await capture({ field: 'a' })).toBe('x');
    expect(await capture({ field: 'nested.k' })).toBe('[1,2]');
    expect(await capture({ field: 'b', format: 'json' })).toBe('2');
    await expect(capture({ field: 'zzz' })).rejects.toThrow(/field "zzz" not present/);
  });

  it('prints raw format without a trailing newline', async () => {
    expect(await capture({ format: 'raw' }, 'plain')).toBe('plain');
    expect(await capture({ format: 'raw' }, { a: 1 })).toBe('{"a":1}');
  });

  it('aligns grid columns and trims trailing spaces', () => {
    expect(
      grid(
        ['Path', 'Type'],
        [
          ['transit/', 'transit'],
          ['a/', 'kv'],
        ],
      ),
    ).toBe('Path        Type\n--------    -------\ntransit/    transit\na/          kv\n');
  });
});

describe('colour', () => {
  it('colours only on a TTY, never with NO_COLOR set, and not on TERM=dumb', () => {
    expect(useColor({ isTTY: true }, {})).toBe(true);
    expect(useColor({ isTTY: false }, {})).toBe(false);
    expect(useColor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(useColor({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(useColor({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(paint({ isTTY: true }, {}).red('x')).toBe('\u001b[31mx\u001b[39m');
    expect(paint({ isTTY: true }, { NO_COLOR: '1' }).red('x')).toBe('x');
  });
});

describe('errors and exit codes', () => {
  it('renders server errors in one line with the status and the request', () => {
    const e = new ServerError(403, ['1 error occurred:\n\t* permission denied\n\n'], null, 'GET sys/mounts');
    expect(errorLine(e)).toBe('Error: permission denied (HTTP 403: GET sys/mounts)');
    expect(errorLine(new ServerError(404, [], null, 'GET secret/x'))).toBe(
      'Error: No value found at secret/x (HTTP 404: GET secret/x)',
    );
    expect(errorLine(new LocalError('cannot read f: ENOENT'))).toBe('Error: cannot read f: ENOENT');
  });

  it('maps errors to 0, 1 and 2', () => {
    expect(exitCodeOf(new ServerError(500, ['x'], null))).toBe(2);
    expect(exitCodeOf(new LocalError('x'))).toBe(1);
    expect(exitCodeOf(new Error('x'))).toBe(1);
    expect(exitCodeOf(new CommanderError(1, 'commander.unknownCommand', 'x'))).toBe(1);
    expect(exitCodeOf(new CommanderError(0, 'commander.helpDisplayed', 'x'))).toBe(0);
  });

  it('turns a commander usage error into one line', () => {
    expect(usageErrorLine("error: unknown command 'bogus'\n")).toBe(
      "Error: unknown command 'bogus' (see keyhold --help)\n",
    );
  });

  it('passes `--version N` after a command word to the command, and keeps a leading --version global', () => {
    expect(joinVersionValues(['kv', 'get', '--version', '2', 'secret/x'])).toEqual([
      'kv',
      'get',
      '--version=2',
      'secret/x',
    ]);
    expect(joinVersionValues(['--version'])).toEqual(['--version']);
    expect(joinVersionValues(['secrets', 'enable', '--version', '2', 'kv'])).toEqual([
      'secrets',
      'enable',
      '--version=2',
      'kv',
    ]);
    expect(joinVersionValues(['status', '--version'])).toEqual(['status', '--version']);
  });
});

describe('k=v pairs', () => {
  it('reads k=v, k=@file and JSON values, repeats become lists, and bad pairs fail locally', async () => {
    const ctx = createContext();
    const f = join(home, 'value.txt');
    writeFileSync(f, 'file content\n');
    expect(await ctx.parsePairs(['a=1', 'b=@' + f, 'c={"x":1}', 'd=[1,2]', 'e=x=y', 'r=1', 'r=2'])).toEqual({
      a: '1',
      b: 'file content\n',
      c: { x: 1 },
      d: [1, 2],
      e: 'x=y',
      r: ['1', '2'],
    });
    await expect(ctx.parsePairs(['novalue'])).rejects.toThrow(LocalError);
    await expect(ctx.parsePairs(['=v'])).rejects.toThrow(/expected key=value/);
    await expect(ctx.parsePairs(['k=@' + join(home, 'missing')])).rejects.toThrow(/cannot read .*missing: ENOENT/);
  });
});
