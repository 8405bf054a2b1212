import { execFileSync, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanup, startDaemon, type Daemon } from '../support/daemon.js';
import { DESTRUCTIVE } from '../../src/cli/confirmations.js';

// `script` (util-linux) gives the CLI a real terminal, so the confirmation prompt appears.
const hasScript = spawnSync('script', ['--version']).status === 0;

describe('confirmation prompts on destructive commands', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d.stop();
    cleanup(d.dir);
  });

  async function deletableKey(name: string): Promise<void> {
    expect((await d.req('POST', `transit/keys/${name}`, {})).status).toBeLessThan(300);
    expect((await d.req('POST', `transit/keys/${name}/config`, { deletion_allowed: true })).status).toBeLessThan(300);
  }

  function inTerminal(args: string[], answer: string): { status: number | null; out: string } {
    const cmd = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], {
      input: answer,
      env: { ...process.env, KEYHOLD_ADDR: d.addr, KEYHOLD_TOKEN: d.token, NO_COLOR: '1' },
      timeout: 30_000,
    });
    return { status: r.status, out: String(r.stdout) };
  }

  it('gives every destructive command a --yes flag', () => {
    const help = (words: string[]) => execFileSync(process.execPath, [BIN, ...words, '--help'], { encoding: 'utf8' });
    for (const path of Object.keys(DESTRUCTIVE)) expect(help(path.split(' ')), path).toMatch(/-y, --yes/);
  });

  it.skipIf(!hasScript)('on a terminal, a declined prompt changes nothing and exits 1', async () => {
    await deletableKey('ask-no');
    const r = inTerminal(['transit', 'keys', 'delete', 'ask-no'], 'n\n');
    expect(r.out).toMatch(/Delete transit key "ask-no"\? .*\[y\/N\]/);
    expect(r.status).toBe(1);
    expect((await d.req('GET', 'transit/keys/ask-no')).status).toBe(200);
  });

  it.skipIf(!hasScript)('on a terminal, "y" proceeds', async () => {
    await deletableKey('ask-yes');
    const r = inTerminal(['transit', 'keys', 'delete', 'ask-yes'], 'y\n');
    expect(r.status).toBe(0);
    expect((await d.req('GET', 'transit/keys/ask-yes')).status).toBe(404);
  });

  it.skipIf(!hasScript)('--yes skips the prompt on a terminal', async () => {
    await deletableKey('ask-flag');
    const r = inTerminal(['transit', 'keys', 'delete', 'ask-flag', '--yes'], '');
    expect(r.out).not.toMatch(/\[y\/N\]/);
    expect(r.status).toBe(0);
    expect((await d.req('GET', 'transit/keys/ask-flag')).status).toBe(404);
  });

  it('on a pipe there is no prompt: scripts proceed', async () => {
    await deletableKey('ask-pipe');
    const r = await d.cli(['transit', 'keys', 'delete', 'ask-pipe'], { input: '' });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).not.toMatch(/\[y\/N\]/);
    expect((await d.req('GET', 'transit/keys/ask-pipe')).status).toBe(404);
  });
});
