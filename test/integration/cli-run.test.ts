/**
 * `keyhold run` and `keyhold env` (issue 17 part 1) with the built CLI against the real daemon:
 * references resolved from KV v2 (current and pinned versions, env file and environment), exit status
 * passthrough, 127/126, signal forwarding and death by signal, errors before COMMAND starts naming
 * the reference and never the value, no secret in argv or keyhold's output, --watch restarts and
 * --signal, and `keyhold env` formats with a 0600 output file.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, cleanup, startDaemon, type Answer, type Daemon } from '../support/daemon.js';

let d: Daemon;
let dir: string;
const SECRET = 'pa$$ "word"\nline2';
beforeAll(async () => {
  d = await startDaemon({ dev: true });
  dir = join(d.dir, 'run');
  mkdirSync(dir);
  ok(await d.req('POST', 'secret/data/app/db', { data: { password: 'old-one', user: 'app' } }));
  ok(await d.req('POST', 'secret/data/app/db', { data: { password: SECRET, user: 'app', port: 5432 } }));
  ok(await d.req('POST', 'secret/data/app/api', { data: { key: 'api-key-1' } }));
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

function ok(r: Answer, status = 200): Answer {
  if (r.status !== status && !(status === 200 && r.status === 204))
    throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}
const NODE = process.execPath;
const printEnv = (...names: string[]) => [
  NODE,
  '-e',
  `process.stdout.write(JSON.stringify({env: {${names.map((n) => `${n}: process.env.${n}`).join(',')}}, argv: process.argv}))`,
];

describe('keyhold run', () => {
  test('references from the environment and an env file reach COMMAND; values never in argv or keyhold output', async () => {
    const envFile = join(dir, '.env');
    writeFileSync(
      envFile,
      '# refs\nAPI_KEY=keyhold://secret/app/api#key\nexport PLAIN="not a ref"\nOLD=keyhold://secret/app/db?version=1#password\n',
    );
    const r = await d.cli(
      [
        'run',
        '--env-file',
        envFile,
        '--',
        ...printEnv('DB_PASSWORD', 'DB_PORT', 'API_KEY', 'PLAIN', 'OLD', 'UNTOUCHED'),
      ],
      {
        env: {
          DB_PASSWORD: 'keyhold://secret/app/db#password',
          DB_PORT: 'keyhold://secret/app/db#port',
          UNTOUCHED: 'keep me',
        },
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.env).toEqual({
      DB_PASSWORD: SECRET,
      DB_PORT: '5432',
      API_KEY: 'api-key-1',
      PLAIN: 'not a ref',
      OLD: 'old-one',
      UNTOUCHED: 'keep me',
    });
    expect(JSON.stringify(out.argv)).not.toContain('pa$$');
    expect(r.stderr).toBe('');
  });

  test('exit status passes through; a missing command is 127, one that cannot run is 126', async () => {
    expect((await d.cli(['run', '--', NODE, '-e', 'process.exit(7)'])).exitCode).toBe(7);
    expect((await d.cli(['run', '--', NODE, '-e', ''])).exitCode).toBe(0);
    const missing = await d.cli(['run', '--', 'no-such-command-kh'], {
      env: { X: 'keyhold://secret/app/db#password' },
    });
    expect(missing.exitCode).toBe(127);
    expect(missing.stderr).toMatch(/no-such-command-kh: command not found/);
    const notExec = join(dir, 'not-exec.sh');
    writeFileSync(notExec, '#!/bin/sh\necho hi\n', { mode: 0o644 });
    expect((await d.cli(['run', '--', notExec])).exitCode).toBe(126);
  });

  test('unknown field, missing secret, unknown mount and no permission stop before COMMAND, naming the reference only', async () => {
    const marker = join(dir, 'started');
    const cmd = ['--', NODE, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`];
    const cases: [Record<string, string>, number, RegExp][] = [
      [
        { A: 'keyhold://secret/app/db#nope' },
        1,
        /A=keyhold:\/\/secret\/app\/db#nope: field "nope" not in secret secret\/app\/db/,
      ],
      [
        { A: 'keyhold://secret/app/missing#x' },
        2,
        /A=keyhold:\/\/secret\/app\/missing#x: no secret at secret\/app\/missing/,
      ],
      [{ A: 'keyhold://nomount/app/db#x' }, 2, /A=keyhold:\/\/nomount\/app\/db#x: (permission denied|no KV mount)/],
      [{ A: 'keyhold://secret/app/db' }, 1, /A=keyhold:\/\/secret\/app\/db: missing #FIELD/],
      [{ A: 'keyhold://secret/app/db?version=x#password' }, 1, /version must be a positive integer/],
      [{ A: 'keyhold://secret/app/db?version=99#password' }, 2, /no secret at secret\/app\/db version 99/],
    ];
    for (const [env, code, re] of cases) {
      const r = await d.cli(['run', ...cmd], { env });
      expect(r.exitCode, JSON.stringify(env) + r.stderr).toBe(code);
      expect(r.stderr, JSON.stringify(env)).toMatch(re);
      expect(r.stderr).not.toContain('pa$$');
      expect(existsSync(marker)).toBe(false);
    }
    ok(
      await d.req('PUT', 'sys/policies/acl/api-only', {
        policy: 'path "secret/data/app/api" { capabilities = ["read"] }',
      }),
      204,
    );
    const limited = ok(await d.req('POST', 'auth/token/create', { policies: ['api-only'] })).body.auth.client_token;
    const ok1 = await d.cli(['run', '--', ...printEnv('K')], {
      env: { K: 'keyhold://secret/app/api#key' },
      token: limited,
    });
    expect(ok1.exitCode, ok1.stderr).toBe(0);
    const denied = await d.cli(['run', ...cmd], {
      env: { K: 'keyhold://secret/app/api#key', P: 'keyhold://secret/app/db#password' },
      token: limited,
    });
    expect(denied.exitCode).toBe(2);
    expect(denied.stderr).toMatch(/P=keyhold:\/\/secret\/app\/db#password: permission denied/);
    expect(existsSync(marker)).toBe(false);
  });

  test('signals reach COMMAND; a COMMAND killed by a signal kills keyhold the same way', async () => {
    const script =
      "process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(3); }); process.on('SIGUSR1', () => console.log('got SIGUSR1')); console.log('ready'); setInterval(() => {}, 1000);";
    const p = spawn(NODE, [BIN, 'run', '--', NODE, '-e', script], {
      env: { ...process.env, KEYHOLD_ADDR: d.addr, KEYHOLD_TOKEN: d.token, S: 'keyhold://secret/app/db#user' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await waitFor(() => out.includes('ready'));
    p.kill('SIGUSR1');
    await waitFor(() => out.includes('got SIGUSR1'));
    p.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => p.on('exit', (c) => r(c)));
    expect(out).toContain('got SIGTERM');
    expect(code).toBe(3);
    const killed = await d.cli(['run', '--', NODE, '-e', "process.kill(process.pid, 'SIGKILL')"]);
    expect(killed.exitCode === 137 || killed.exitCode === -1).toBe(true);
  });

  test('--watch restarts COMMAND with the new value after a change; --signal sends a signal instead', async () => {
    ok(await d.req('POST', 'secret/data/app/watch', { data: { v: 'one' } }));
    const script =
      "console.log('value=' + process.env.W); process.on('SIGHUP', () => console.log('hup')); setInterval(() => {}, 1000);";
    const env = { ...process.env, KEYHOLD_ADDR: d.addr, KEYHOLD_TOKEN: d.token, W: 'keyhold://secret/app/watch#v' };
    const p = spawn(
      NODE,
      [BIN, 'run', '--watch', '--watch-interval', '1s', '--debounce', '200ms', '--', NODE, '-e', script],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await waitFor(() => out.includes('value=one'));
    ok(await d.req('POST', 'secret/data/app/watch', { data: { v: 'two' } }));
    await waitFor(() => out.includes('value=two'), 15_000);
    p.kill('SIGTERM');
    await new Promise((r) => p.on('exit', r));

    const q = spawn(
      NODE,
      [
        BIN,
        'run',
        '--watch',
        '--signal',
        'HUP',
        '--watch-interval',
        '1s',
        '--debounce',
        '0s',
        '--',
        NODE,
        '-e',
        script,
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let qout = '';
    q.stdout.on('data', (c: Buffer) => (qout += c.toString()));
    await waitFor(() => qout.includes('value=two'));
    ok(await d.req('POST', 'secret/data/app/watch', { data: { v: 'three' } }));
    await waitFor(() => qout.includes('hup'), 15_000);
    expect(qout).not.toContain('value=three'); // signalled, not restarted
    q.kill('SIGTERM');
    await new Promise((r) => q.on('exit', r));
  });
});

describe('KV change events (GET MOUNT/events) and --watch without them', () => {
  test('a cursor lists changes after it, only of secrets the token may read; another epoch is truncated', async () => {
    const start = ok(await d.req('GET', 'secret/events')).body.data;
    expect(start).toMatchObject({ truncated: false, events: [] });
    ok(await d.req('POST', 'secret/data/team/a', { data: { x: '1' } }));
    ok(await d.req('POST', 'secret/data/other/b', { data: { y: '2' } }));
    const all = ok(await d.req('GET', `secret/events?index=${start.index}&epoch=${start.epoch}`)).body.data;
    expect(all.events.map((e: { path: string; kind: string; version: number }) => [e.path, e.kind, e.version])).toEqual(
      [
        ['team/a', 'data-write', 1],
        ['other/b', 'data-write', 1],
      ],
    );
    expect(JSON.stringify(all)).not.toContain('"x"');
    ok(
      await d.req('PUT', 'sys/policies/acl/team-events', {
        policy:
          'path "secret/data/team/*" { capabilities = ["read"] }\npath "secret/events" { capabilities = ["read"] }',
      }),
      204,
    );
    const team = ok(await d.req('POST', 'auth/token/create', { policies: ['team-events'] })).body.auth.client_token;
    const seen = ok(await d.req('GET', `secret/events?index=${start.index}`, undefined, { token: team })).body.data;
    expect(seen.events.map((e: { path: string }) => e.path)).toEqual(['team/a']);
    expect(ok(await d.req('GET', `secret/events?index=1&epoch=other`)).body.data).toMatchObject({
      truncated: true,
      events: [],
    });
    ok(
      await d.req('PUT', 'sys/policies/acl/team-only', {
        policy: 'path "secret/data/team/*" { capabilities = ["read"] }',
      }),
      204,
    );
    const noEvents = ok(await d.req('POST', 'auth/token/create', { policies: ['team-only'] })).body.auth.client_token;
    expect((await d.req('GET', 'secret/events', undefined, { token: noEvents })).status).toBe(403);

    // --watch with that token falls back to re-reading the secret, and says so.
    const script = "console.log('value=' + process.env.T); setInterval(() => {}, 1000);";
    const p = spawn(
      NODE,
      [BIN, 'run', '--watch', '--watch-interval', '1s', '--debounce', '0s', '--', NODE, '-e', script],
      {
        env: { ...process.env, KEYHOLD_ADDR: d.addr, KEYHOLD_TOKEN: noEvents, T: 'keyhold://secret/team/a#x' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr.on('data', (c: Buffer) => (err += c.toString()));
    await waitFor(() => out.includes('value=1'));
    ok(await d.req('POST', 'secret/data/team/a', { data: { x: '2' } }));
    await waitFor(() => out.includes('value=2'), 15_000);
    expect(err).toMatch(/cannot read secret\/events \(403\); re-reading its secrets every 1s instead/);
    p.kill('SIGTERM');
    await new Promise((r) => p.on('exit', r));
  });
});

describe('keyhold env', () => {
  test('dotenv, json and shell formats; --output writes a 0600 file; dotenv round-trips through run --env-file', async () => {
    const refs = join(dir, 'refs.env');
    writeFileSync(refs, 'DB_PASSWORD=keyhold://secret/app/db#password\nAPP=plain\n');
    const json = await d.cli(['env', '--env-file', refs, '--format', 'json']);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ APP: 'plain', DB_PASSWORD: SECRET });
    const shell = await d.cli(['env', '--env-file', refs, '--format', 'shell']);
    const sh = spawn('sh', ['-c', `${shell.stdout}\nprintf %s "$DB_PASSWORD"`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let shOut = '';
    sh.stdout.on('data', (c: Buffer) => (shOut += c.toString()));
    await new Promise((r) => sh.on('exit', r));
    expect(shOut).toBe(SECRET);
    const file = join(dir, 'resolved.env');
    writeFileSync(file, 'old', { mode: 0o644 });
    const w = await d.cli(['env', '--env-file', refs, '--output', file]);
    expect(w.exitCode, w.stderr).toBe(0);
    expect(w.stdout).toBe('');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain('DB_PASSWORD="pa$$ \\"word\\"\\nline2"');
    const back = await d.cli(['run', '--env-file', file, '--', ...printEnv('DB_PASSWORD', 'APP')]);
    expect(JSON.parse(back.stdout).env).toEqual({ DB_PASSWORD: SECRET, APP: 'plain' });
    const wrong = await d.cli(['env', '--format', 'yaml']);
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toMatch(/keyhold env prints --format dotenv, json or shell/);
  });
});

async function waitFor(cond: () => boolean, ms = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}
