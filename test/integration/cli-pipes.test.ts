/**
 * The CLI against closed pipes and signals, as Unix tools behave: a reader that goes away ends any
 * command quietly with 141 (what a shell reports for git and gh, killed by SIGPIPE), whether the
 * command writes to stdout or stderr, including --help, which commander prints itself; Ctrl-C during a
 * long command exits 130 and leaves no partial output file.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;
beforeAll(async () => {
  d = await startDaemon();
  expect((await d.req('POST', 'transit/keys/pipes', {})).status).toBeLessThan(300);
});
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

const env = () => ({
  ...process.env,
  KEYHOLD_HOME: d.dir,
  KEYHOLD_ADDR: d.addr,
  KEYHOLD_TOKEN: d.token,
  NO_COLOR: '1',
});

/** Run the CLI with stdout or stderr already closed by its reader; the exit status and the other stream. */
function withClosed(
  stream: 'stdout' | 'stderr',
  args: string[],
  input?: string,
): Promise<{ code: number | null; signal: string | null; other: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args], { env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    // The reader goes away before the CLI has written anything: its first write gets EPIPE.
    p[stream].destroy();
    let other = '';
    p[stream === 'stdout' ? 'stderr' : 'stdout'].on('data', (c: Buffer) => (other += c.toString()));
    p.stdin.on('error', () => {}); // the CLI may have ended before reading its input
    p.stdin.end(input ?? '');
    p.on('close', (code, signal) => resolve({ code, signal, other }));
  });
}

describe('a closed pipe ends the CLI quietly with 141', () => {
  const stdoutCases: [string, string[], string?][] = [
    ['--help', ['--help']],
    ['a nested --help', ['sync', 'dest', 'create', '--help']],
    ['help TOPIC', ['help', 'exit-codes']],
    ['--version', ['--version']],
    ['the transit encrypt fast path', ['transit', 'encrypt', 'pipes', '--field', 'ciphertext'], 'x'],
    ['the full CLI', ['read', 'sys/mounts', '--format', 'json']],
    ['a large output', ['openapi', '--offline']],
  ];
  for (const [what, args, input] of stdoutCases) {
    it(`stdout: ${what}`, async () => {
      const r = await withClosed('stdout', args, input);
      expect(r.signal).toBeNull();
      expect(r.code).toBe(141);
      expect(r.other).toBe('');
    });
  }

  it('stderr: an error line to a closed stderr', async () => {
    const r = await withClosed('stderr', ['read', 'nowhere/at/all']);
    expect(r.code).toBe(141);
    expect(r.other).toBe('');
  });

  it('through a shell pipe into head: no stack trace, 141 in PIPESTATUS', async () => {
    const out = await new Promise<string>((resolve) => {
      const p = spawn(
        'bash',
        ['-c', `node ${BIN} openapi --offline | head -c 10 >/dev/null; echo "status=\${PIPESTATUS[0]}"`],
        { env: env() },
      );
      let s = '';
      p.stdout.on('data', (c: Buffer) => (s += c.toString()));
      p.stderr.on('data', (c: Buffer) => (s += c.toString()));
      p.on('close', () => resolve(s));
    });
    expect(out.trim()).toBe('status=141');
  });
});

/** Wait until `test` holds, polling. */
async function until(test: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('Ctrl-C during a long command exits 130', () => {
  it('envelope encrypt: the partial --output file is removed', async () => {
    const out = join(d.dir, 'partial.khev');
    const p = spawn(process.execPath, [BIN, 'transit', 'encrypt', 'pipes', '--envelope', '--output', out], {
      env: env(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exit = new Promise<number | null>((r) => p.on('close', (code) => r(code)));
    // A few MiB, then stdin stays open: the command is mid-stream with a partial file on disk.
    p.stdin.on('error', () => {}); // unread input when the CLI ends
    p.stdin.write(Buffer.alloc(4 << 20, 7));
    await until(() => existsSync(out) && statSync(out).size > 1 << 20, 'partial output');
    p.kill('SIGINT');
    expect(await exit).toBe(130);
    expect(existsSync(out)).toBe(false);
    expect(stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it('sync status --watch: rounds until Ctrl-C', async () => {
    const p = spawn(process.execPath, [BIN, 'sync', 'status', '--watch', '0.2'], {
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let all = '';
    p.stdout.on('data', (c: Buffer) => (all += c.toString()));
    p.stderr.on('data', (c: Buffer) => (all += c.toString()));
    const exit = new Promise<number | null>((r) => p.on('close', (code) => r(code)));
    await until(() => (all.match(/No associations\./g) ?? []).length >= 2, 'two rounds');
    p.kill('SIGINT');
    expect(await exit).toBe(130);
  });

  it('sync status --watch refuses a bad interval', async () => {
    const r = await d.cli(['sync', 'status', '--watch', '0']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('--watch');
  });
});
