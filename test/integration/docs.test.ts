/**
 * Docs against the real daemon and the built CLI: the served OpenAPI document (validated, filtered by
 * token), `keyhold openapi`, `path-help`, `help TOPIC`, `completion` matching the committed files, and
 * dynamic completion end to end through bash, zsh and fish asking the daemon; and every command block
 * of the README and docs/ run against a dev daemon, so the docs cannot lie.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, cleanup, startDaemon, type Daemon } from '../support/daemon.js';
import { DOC_SKIP_MARKER, docBlocks, type DocBlock } from '../support/doc-blocks.js';

let d: Daemon;
let bin: string;

beforeAll(async () => {
  d = await startDaemon();
  bin = join(d.dir, 'bin');
  mkdirSync(bin);
  symlinkSync(BIN, join(bin, 'keyhold'));
  const ok = (r: { status: number; text: string }) => expect(r.status, r.text).toBeLessThan(300);
  ok(await d.req('POST', 'sys/mounts/payments', { type: 'transit' }));
  ok(await d.req('POST', 'transit/keys/app', {}));
  ok(await d.req('POST', 'transit/keys/release', { type: 'ed25519' }));
  ok(await d.req('POST', 'payments/keys/card', {}));
  ok(await d.req('POST', 'secret/data/app/db', { data: { password: 'x' } }));
  ok(await d.req('POST', 'secret/data/top', { data: { a: '1' } }));
  ok(
    await d.req('POST', 'sys/sync/destinations/repohost/gh1', {
      repository_owner: 'acme',
      repository_name: 'app',
      access_token: 'not-a-real-token',
    }),
  );
  ok(
    await d.req('POST', 'sys/policies/acl/keys-reader', {
      policy: 'path "transit/keys/*" { capabilities = ["read"] }',
    }),
  );
});
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

async function valid(doc: unknown): Promise<boolean> {
  const res = await new Validator().validate(JSON.parse(JSON.stringify(doc)));
  if (!res.valid) throw new Error(JSON.stringify(res.errors).slice(0, 2000));
  return true;
}

describe('GET sys/internal/specs/openapi', () => {
  it('serves a valid OpenAPI 3 document of every mount, user mounts under their paths', async () => {
    const r = await d.req('GET', 'sys/internal/specs/openapi');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toContain('application/json');
    expect(r.body.openapi).toBe('3.0.2');
    expect(await valid(r.body)).toBe(true);
    const paths = Object.keys(r.body.paths);
    for (const p of [
      '/transit/keys/{name}',
      '/payments/keys/{name}',
      '/secret/data/{path}',
      '/sys/mounts',
      '/auth/token/lookup-self',
      '/sys/internal/specs/openapi',
    ])
      expect(paths).toContain(p);
    expect(paths.some((p) => p.startsWith('/sys/sync/'))).toBe(true);
  });

  it('replaces user mount paths with parameters for generic_mount_paths=true', async () => {
    const r = await d.req('GET', 'sys/internal/specs/openapi?generic_mount_paths=true');
    expect(r.status).toBe(200);
    expect(await valid(r.body)).toBe(true);
    const paths = Object.keys(r.body.paths);
    expect(paths).toContain('/{payments_mount_path}/keys/{name}');
    expect(paths).not.toContain('/payments/keys/{name}');
    expect(paths).toContain('/sys/mounts');
  });

  it('holds only unauthenticated routes without a token', async () => {
    const r = await d.req('GET', 'sys/internal/specs/openapi', undefined, { token: null });
    expect(r.status).toBe(200);
    const paths = Object.keys(r.body.paths);
    expect(paths).toContain('/sys/health');
    expect(paths).toContain('/sys/seal-status');
    expect(paths).not.toContain('/sys/mounts');
    expect(paths).not.toContain('/transit/keys/{name}');
  });

  it("holds what a limited token's policies allow", async () => {
    const t = await d.req('POST', 'auth/token/create', { policies: ['keys-reader'], no_default_policy: true });
    const token = t.body.auth.client_token as string;
    const r = await d.req('GET', 'sys/internal/specs/openapi', undefined, { token });
    expect(r.status).toBe(200);
    expect(await valid(r.body)).toBe(true);
    const paths = r.body.paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths['/transit/keys/{name}'] ?? {})).toEqual(['get']);
    expect(paths['/sys/mounts']).toBeUndefined();
    expect(paths['/payments/keys/{name}']).toBeUndefined();
    expect(paths['/transit/encrypt/{name}']).toBeUndefined();
  });
});

describe('keyhold openapi and path-help', () => {
  it('keyhold openapi prints the served document', async () => {
    const r = await d.cli(['openapi']);
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.paths['/payments/keys/{name}']).toBeDefined();
    expect(await valid(doc)).toBe(true);
  });

  it('keyhold openapi --offline needs no daemon', async () => {
    const r = await d.cli(['openapi', '--offline'], { env: { KEYHOLD_ADDR: `unix://${join(d.dir, 'nothing.sock')}` } });
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.paths['/transit/keys/{name}']).toBeDefined();
    expect(await valid(doc)).toBe(true);
  });

  it('path-help describes the route of a user mount from the live mount table', async () => {
    const r = await d.cli(['path-help', 'payments/keys/card']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Mount: +payments\/ \(transit\)$/m);
    expect(r.stdout).toMatch(/^Matching Route: keys\/NAME$/m);
    expect(r.stdout).toContain('## PARAMETERS');
    const j = await d.cli(['--format', 'json', 'path-help', 'secret/data/app/db']);
    expect(j.exitCode, j.stderr).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({ mount: { path: 'secret/', type: 'kv' }, route: 'data/*path' });
  });

  it('path-help exits 1 naming the path when no route serves it', async () => {
    const r = await d.cli(['path-help', 'nowhere/at/all']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('no route serves "nowhere/at/all"');
  });

  it('path-help falls back to the dev mounts, saying so, without a daemon', async () => {
    const r = await d.cli(['path-help', 'transit/encrypt/app'], {
      env: { KEYHOLD_ADDR: `unix://${join(d.dir, 'nothing.sock')}` },
    });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('assuming transit/ and secret/ mounts');
    expect(r.stdout).toMatch(/^Matching Route: encrypt\/NAME$/m);
  });
});

describe('keyhold help TOPIC', () => {
  it('prints the exit codes, environment and formats topics', async () => {
    const e = await d.cli(['help', 'exit-codes']);
    expect(e.exitCode).toBe(0);
    expect(e.stdout).toMatch(/^ {2}2 +The daemon answered with an error/m);
    expect((await d.cli(['help', 'environment'])).stdout).toContain('KEYHOLD_ADDR');
    expect((await d.cli(['help', 'formats'])).stdout).toContain('--field NAME');
  });

  it('shows the help of a command, with examples', async () => {
    const r = await d.cli(['help', 'transit', 'encrypt']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('Usage: keyhold transit encrypt');
    expect(r.stdout).toMatch(/Examples:\n {2}\$ /);
  });

  it('exits 1 on an unknown topic, listing the topics', async () => {
    const r = await d.cli(['help', 'no-such-topic']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('exit-codes, environment, formats');
  });
});

describe('shell completion', () => {
  it('keyhold completion prints the committed script of each shell', () => {
    for (const [shell, file] of [
      ['bash', 'completions/keyhold.bash'],
      ['zsh', 'completions/_keyhold'],
      ['fish', 'completions/keyhold.fish'],
    ]) {
      // spawnSync keeps the output byte for byte (execa would strip the final newline).
      const r = spawnSync(process.execPath, [BIN, 'completion', shell!], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      expect(
        r.stdout === readFileSync(join(ROOT, file!), 'utf8'),
        `keyhold completion ${shell} differs from ${file}: run \`npm run docs\``,
      ).toBe(true);
    }
  });

  it('__complete lists key names, KV paths, mounts and destinations from the daemon', async () => {
    const c = async (...args: string[]) => (await d.cli(['__complete', ...args])).stdout.split('\n').filter(Boolean);
    expect(await c('transit-keys', '--', 'transit', 'keys', 'read', '')).toEqual(['app', 'release']);
    expect(await c('transit-keys', '--', 'transit', 'encrypt', '--mount', 'payments', '')).toEqual(['card']);
    expect(await c('kv-paths', '--', 'kv', 'get', 'secret/')).toEqual(['secret/app/', 'secret/top']);
    expect(await c('kv-paths', '--', 'kv', 'get', 'secret/app/')).toEqual(['secret/app/db']);
    expect(await c('mounts', '--', 'read', '')).toEqual(['cubbyhole/', 'payments/', 'secret/', 'transit/']);
    expect(await c('transit-mounts', '--', 'transit', 'keys', 'list', '--mount', '')).toEqual(['payments', 'transit']);
    expect(await c('sync-destinations', '--', 'sync', 'dest', 'read', 'repohost', '')).toEqual(['gh1']);
    expect(await c('policies', '--', 'policy', 'read', '')).toContain('keys-reader');
  });

  it('__complete stays quiet (exit 0, no output) without a daemon or with a bad token', async () => {
    for (const env of [
      { KEYHOLD_ADDR: `unix://${join(d.dir, 'nothing.sock')}` },
      { KEYHOLD_ADDR: 'http://127.0.0.1:1' },
      { KEYHOLD_TOKEN: 'bad-token' },
    ]) {
      const r = await d.cli(['__complete', 'transit-keys', '--', 'transit', 'keys', 'read', ''], { env });
      expect(r).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
    }
  });

  it('is hidden from help and the completion scripts', async () => {
    expect((await d.cli(['--help'])).stdout).not.toContain('__complete');
    expect(readFileSync(join(ROOT, 'completions/keyhold.bash'), 'utf8')).not.toMatch(/_kh_subs='[^']*__complete/);
  });

  const shellEnv = () => ({
    ...process.env,
    PATH: `${bin}:${process.env.PATH}`,
    KEYHOLD_ADDR: d.addr,
    KEYHOLD_TOKEN: d.token,
    HOME: d.dir,
    XDG_CONFIG_HOME: join(d.dir, 'cfg'),
    XDG_DATA_HOME: join(d.dir, 'xdg'),
  });
  const sh = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8', env: shellEnv(), timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr}`);
    return r.stdout.split('\n').filter(Boolean);
  };

  it('bash completes key names and KV paths from the daemon', () => {
    const out = sh('bash', [
      '--norc',
      '-c',
      `source ${join(ROOT, 'completions/keyhold.bash')}
       COMP_WORDS=(keyhold transit keys read ''); COMP_CWORD=4; _keyhold; printf 'k:%s\\n' "\${COMPREPLY[@]}"
       COMP_WORDS=(keyhold kv get secret/a); COMP_CWORD=3; _keyhold; printf 'p:%s\\n' "\${COMPREPLY[@]}"`,
    ]);
    expect(out).toEqual(['k:app', 'k:release', 'p:secret/app/']);
  });

  it('zsh completes key names from the daemon', () => {
    const out = sh('zsh', [
      '-f',
      '-c',
      `fpath=(${join(ROOT, 'completions')} $fpath); autoload -Uz compinit && compinit -u -d ${join(d.dir, 'zcd')}
       compadd() { local a seen=0; for a in "$@"; do if (( seen )); then print -r -- "$a"; elif [[ $a == -- ]]; then seen=1; fi; done }
       words=(keyhold transit keys read ''); CURRENT=5; _keyhold`,
    ]);
    expect(out).toEqual(['app', 'release']);
  });

  it('fish completes key names and destination names from the daemon', () => {
    const out = sh('fish', [
      '--no-config',
      '-c',
      `source ${join(ROOT, 'completions/keyhold.fish')}; complete -C 'keyhold transit sign '; complete -C 'keyhold sync dest read repohost '`,
    ]);
    expect(out.map((l) => l.split('\t')[0])).toEqual(['app', 'release', 'gh1']);
  });
});

/** Run one block with bash in `cwd`; resolves with the exit status and the output. */
function runBlock(b: DocBlock, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    // -e: a failing command fails the block (commands expected to fail are written as `if ...; then exit 1; fi`).
    // No pipefail: a reader's shell has none, and `keyhold ... | head` ends keyhold with 141 by design.
    // Its own process group, so a timeout ends whatever the block started too.
    const p = spawn('bash', ['--noprofile', '--norc', '-e', '-c', b.code], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => process.kill(-p.pid!, 'SIGKILL'), 30_000);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('command blocks of the README and docs/ run against a dev daemon', () => {
  const files = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];

  it('finds the pages and their blocks, and every fenced block names its language', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/tutorial.md', 'docs/transit.md', 'docs/kv.md']));
    for (const f of files)
      for (const b of docBlocks(readFileSync(join(ROOT, f), 'utf8')))
        expect(b.lang, `${f}:${b.line}: a fence without a language (use text for layouts)`).not.toBe('');
    const readmeText = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const readme = docBlocks(readmeText);
    expect(readme.filter((b) => b.run).length).toBeGreaterThan(4);
    // Every page is reachable from the README's table of pages.
    for (const f of files.filter((x) => x !== 'README.md'))
      expect(readmeText, `README.md does not link ${f}`).toContain(`](${f})`);
  });

  // Pages run side by side (each has its own daemon and folder): the RSA-4096 wrapping key of the
  // transit page's BYOK section alone takes seconds to generate.
  for (const f of files) {
    it.concurrent(`${f}: every command block runs (or says why not)`, async ({ expect }) => {
      const blocks = docBlocks(readFileSync(join(ROOT, f), 'utf8'));
      for (const b of blocks) {
        if (b.command && !b.run)
          expect(
            b.skipReason,
            `${f}:${b.line}: a ${b.lang} block must be \`sh\` and run, or start with "${DOC_SKIP_MARKER} <reason>"`,
          ).toBeTruthy();
      }
      const runnable = blocks.filter((b) => b.run);
      if (!runnable.length) return;
      // A fresh dev daemon per page: the blocks of one page build on each other, pages do not.
      const dd = await startDaemon();
      try {
        const work = join(dd.dir, 'work');
        const home = join(dd.dir, 'home');
        const binDir = join(dd.dir, 'bin');
        for (const dir of [work, home, binDir]) mkdirSync(dir, { recursive: true });
        symlinkSync(BIN, join(binDir, 'keyhold'));
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          PATH: `${binDir}:${process.env.PATH}`,
          HOME: home,
          KEYHOLD_HOME: join(home, '.keyhold'),
          XDG_CONFIG_HOME: join(home, '.config'),
          XDG_DATA_HOME: join(home, '.local', 'share'),
          KEYHOLD_ADDR: dd.addr,
          KEYHOLD_TOKEN: dd.token,
          NO_COLOR: '1',
        };
        for (const key of ['VAULT_ADDR', 'VAULT_TOKEN', 'KEYHOLD_FORMAT']) delete env[key];
        for (const b of runnable) {
          const r = await runBlock(b, work, env);
          if (r.code !== 0)
            expect.fail(
              `${f}:${b.line}: the block exited ${r.code}:\n${b.code}\n--- output ---\n${r.out.slice(-3000)}`,
            );
        }
      } finally {
        await dd.stop();
        cleanup(dd.dir);
      }
    }, 120_000);
  }
});
