/**
 * The generated completion scripts driven by the real shells: bash (COMP_WORDS/COMP_CWORD), zsh (the
 * completion function loaded with compinit, compadd captured) and fish (`complete -C`). A stub
 * `keyhold` on PATH stands in for the daemon-backed `keyhold __complete` and records what it was asked.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAll } from '../../../src/docs/generate.js';

const dir = mkdtempSync(join(tmpdir(), 'keyhold-comp-'));
const bin = join(dir, 'bin');
const log = join(dir, 'stub.log');
const files = generateAll();

beforeAll(() => {
  mkdirSync(bin);
  mkdirSync(join(dir, 'zsh'));
  mkdirSync(join(dir, 'work'));
  writeFileSync(join(dir, 'work', 'policy.hcl'), '');
  // Stub: logs its arguments one per line, answers by source.
  writeFileSync(
    join(bin, 'keyhold'),
    `#!/bin/sh\nprintf '%s\\n' "$@" >> "${log}"\nprintf '%s\\n' '@@end' >> "${log}"\ncase "$2" in\n  transit-keys) printf 'app\\ndb-key\\n' ;;\n  transit-mounts) printf 'transit\\npayments\\n' ;;\n  kv-paths) printf 'secret/app/\\nsecret/top\\n' ;;\nesac\n`,
  );
  chmodSync(join(bin, 'keyhold'), 0o755);
  writeFileSync(join(dir, 'keyhold.bash'), files['completions/keyhold.bash']!);
  writeFileSync(join(dir, 'zsh', '_keyhold'), files['completions/_keyhold']!);
  writeFileSync(join(dir, 'keyhold.fish'), files['completions/keyhold.fish']!);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = () => ({
  ...process.env,
  PATH: `${bin}:${process.env.PATH}`,
  HOME: dir,
  XDG_CONFIG_HOME: join(dir, 'cfg'),
  XDG_DATA_HOME: join(dir, 'data'),
  XDG_CACHE_HOME: join(dir, 'cache'),
});

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: env(), cwd: join(dir, 'work'), timeout: 30_000 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** Split `== case` blocks of a harness's output into candidate lists. */
function blocks(out: string): Record<string, string[]> {
  const res: Record<string, string[]> = {};
  let cur = '';
  for (const line of out.split('\n')) {
    if (line.startsWith('== ')) res[(cur = line.slice(3))] = [];
    else if (line && cur) res[cur]!.push(line);
  }
  return res;
}

function stubCalls(): string[][] {
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return [];
  }
  rmSync(log);
  return text
    .split('@@end\n')
    .filter((c) => c.length)
    .map((c) => c.split('\n').slice(0, -1));
}

// Each case: words after `keyhold` (the last one is being completed).
const CASES: string[][] = [
  ['tra'],
  ['transit', 'keys', 'cr'],
  ['--format', ''],
  ['transit', 'keys', 'read', ''],
  ['transit', 'keys', 'read', '--mount', ''],
  ['transit', 'keys', 'create', '--ty'],
  ['transit', 'keys', 'read', '--format', ''],
  ['kv', 'get', 'secret/'],
  ['policy', 'write', 'p', 'pol'],
  ['completion', ''],
  ['help', 'exit'],
];

describe('bash completion', () => {
  let out: Record<string, string[]>;
  let calls: string[][];
  beforeAll(() => {
    const script = [
      `source ${JSON.stringify(join(dir, 'keyhold.bash'))}`,
      'complete -p keyhold',
      't() { COMP_WORDS=(keyhold "$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _keyhold; echo "== $*"; printf "%s\\n" "${COMPREPLY[@]}"; }',
      ...CASES.map((c) => `t ${c.map((w) => `'${w}'`).join(' ')}`),
    ].join('\n');
    const text = run('bash', ['--norc', '--noprofile', '-c', script]);
    expect(text.split('\n')[0]).toBe('complete -F _keyhold keyhold');
    out = blocks(text);
    calls = stubCalls();
  });

  it('is registered for keyhold with complete -F', () => {
    expect(run('bash', ['--norc', '-c', `source ${join(dir, 'keyhold.bash')}; complete -p keyhold`]).trim()).toBe(
      'complete -F _keyhold keyhold',
    );
  });
  it('completes top-level and nested commands', () => {
    expect(out['tra']).toEqual(['transit']);
    expect(out['transit keys cr']).toEqual(['create']);
  });
  it('completes option names and fixed option values, global options at any depth', () => {
    expect(out['--format ']).toEqual(['table', 'json', 'yaml', 'raw', 'dotenv', 'shell', 'jwk', 'jwks', 'pem']);
    expect(out['transit keys create --ty']).toEqual(['--type']);
    expect(out['transit keys read --format ']).toEqual([
      'table',
      'json',
      'yaml',
      'raw',
      'dotenv',
      'shell',
      'jwk',
      'jwks',
      'pem',
    ]);
    expect(out['completion ']).toEqual(['bash', 'zsh', 'fish']);
    expect(out['help exit']).toEqual(['exit-codes']);
  });
  it('asks keyhold __complete for key names, mounts and KV paths, passing the words typed', () => {
    expect(out['transit keys read ']).toEqual(['app', 'db-key']);
    expect(out['transit keys read --mount ']).toEqual(['transit', 'payments']);
    expect(out['kv get secret/']).toEqual(['secret/app/', 'secret/top']);
    expect(calls).toContainEqual(['__complete', 'transit-keys', '--', 'transit', 'keys', 'read', '']);
    expect(calls).toContainEqual(['__complete', 'transit-mounts', '--', 'transit', 'keys', 'read', '--mount', '']);
    expect(calls).toContainEqual(['__complete', 'kv-paths', '--', 'kv', 'get', 'secret/']);
  });
  it('completes file names for file arguments', () => {
    expect(out['policy write p pol']).toEqual(['policy.hcl']);
  });
});

describe('zsh completion', () => {
  let out: Record<string, string[]>;
  let calls: string[][];
  beforeAll(() => {
    const script = [
      `fpath=(${join(dir, 'zsh')} $fpath)`,
      `autoload -Uz compinit && compinit -u -d ${join(dir, 'zcompdump')}`,
      // Capture what would be offered: everything after `--` in each compadd call.
      'compadd() { local a seen=0; for a in "$@"; do if (( seen )); then print -r -- "$a"; elif [[ $a == -- ]]; then seen=1; fi; done }',
      '_files() { print -r -- "<files>" }',
      't() { print -r -- "== ${(j: :)@}"; words=(keyhold "$@"); CURRENT=${#words}; _keyhold }',
      ...CASES.map((c) => `t ${c.map((w) => `'${w}'`).join(' ')}`),
    ].join('\n');
    out = blocks(run('zsh', ['-f', '-c', script]));
    calls = stubCalls();
  });

  it('loads through compinit as the #compdef function for keyhold', () => {
    expect(files['completions/_keyhold']!.split('\n')[0]).toBe('#compdef keyhold');
    expect(
      run('zsh', [
        '-f',
        '-c',
        `fpath=(${join(dir, 'zsh')} $fpath); autoload -Uz compinit && compinit -u -d ${join(dir, 'zcd2')}; print -r -- $_comps[keyhold]`,
      ]).trim(),
    ).toBe('_keyhold');
  });
  it('offers subcommands (zsh filters by prefix itself)', () => {
    expect(out['tra']).toContain('transit');
    expect(out['transit keys cr']).toContain('create');
    expect(out['transit keys cr']).toContain('list');
  });
  it('offers options and fixed values', () => {
    expect(out['--format ']).toEqual(['table', 'json', 'yaml', 'raw', 'dotenv', 'shell', 'jwk', 'jwks', 'pem']);
    expect(out['transit keys create --ty']).toContain('--type');
    expect(out['transit keys read --format ']).toEqual([
      'table',
      'json',
      'yaml',
      'raw',
      'dotenv',
      'shell',
      'jwk',
      'jwks',
      'pem',
    ]);
    expect(out['completion ']).toEqual(['bash', 'zsh', 'fish']);
  });
  it('asks keyhold __complete for key names, mounts and KV paths', () => {
    expect(out['transit keys read ']).toEqual(['app', 'db-key']);
    expect(out['transit keys read --mount ']).toEqual(['transit', 'payments']);
    expect(out['kv get secret/']).toEqual(['secret/app/', 'secret/top']);
    expect(calls).toContainEqual(['__complete', 'transit-keys', '--', 'transit', 'keys', 'read', '']);
  });
  it('hands file arguments to _files', () => {
    expect(out['policy write p pol']).toEqual(['<files>']);
  });
});

describe('fish completion', () => {
  let out: Record<string, string[]>;
  let calls: string[][];
  beforeAll(() => {
    const script = [
      `source ${join(dir, 'keyhold.fish')}`,
      ...CASES.map((c) => `echo '== ${c.join(' ')}'; complete -C ${JSON.stringify(['keyhold', ...c].join(' '))}`),
    ].join('\n');
    out = blocks(run('fish', ['--no-config', '-c', script]));
    for (const k of Object.keys(out)) out[k] = out[k]!.map((l) => l.split('\t')[0]!);
    calls = stubCalls();
  });

  it('completes top-level and nested commands', () => {
    expect(out['tra']).toEqual(['transit']);
    expect(out['transit keys cr']).toEqual(['create']);
  });
  it('completes options and fixed values', () => {
    expect(out['--format '].sort()).toEqual(['dotenv', 'json', 'jwk', 'jwks', 'pem', 'raw', 'shell', 'table', 'yaml']);
    expect(out['transit keys create --ty']).toEqual(['--type']);
    expect(out['transit keys read --format '].sort()).toEqual([
      'dotenv',
      'json',
      'jwk',
      'jwks',
      'pem',
      'raw',
      'shell',
      'table',
      'yaml',
    ]);
    expect(out['completion '].sort()).toEqual(['bash', 'fish', 'zsh']);
  });
  it('asks keyhold __complete for key names, mounts and KV paths', () => {
    expect(out['transit keys read '].sort()).toEqual(['app', 'db-key']);
    expect(out['transit keys read --mount '].sort()).toEqual(['payments', 'transit']);
    expect(out['kv get secret/'].sort()).toEqual(['secret/app/', 'secret/top']);
    expect(calls).toContainEqual(['__complete', 'transit-keys', '--', 'transit', 'keys', 'read', '']);
  });
  it('completes file names for file arguments', () => {
    expect(out['policy write p pol']).toEqual(['policy.hcl']);
  });
});
