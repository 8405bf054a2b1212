/**
 * Vault-client compatibility: hvac's wire behaviour. hvac itself cannot be installed here (no PyPI),
 * so test/compat/hvac_like.py replays what hvac sends (method, path, headers, JSON body, LIST verb over
 * one keep-alive requests.Session) and reads responses the way hvac does; see its docstring for the
 * hvac source files each call follows. This test runs it against real daemons and checks its report.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, cleanup, startDaemon, type Daemon } from '../support/daemon.js';

const SCRIPT = join(ROOT, 'test', 'compat', 'hvac_like.py');

async function runScript(args: string[]) {
  const r = await execa('python3', [SCRIPT, ...args], { reject: false, timeout: 45_000 });
  const lines = r.stdout.split('\n').filter(Boolean);
  return { exitCode: r.exitCode, lines, failures: lines.filter((l) => l.startsWith('FAIL ')), stderr: r.stderr };
}

describe('hvac wire behaviour (test/compat/hvac_like.py)', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon({ tcp: true });
  });
  afterAll(async () => {
    await d?.stop();
    if (d) cleanup(d.dir);
  });

  it('passes every replayed hvac call against a dev daemon', async () => {
    const r = await runScript([d.tcp!, 'root', 'main']);
    expect(r.failures, r.stderr).toEqual([]);
    expect(r.exitCode).toBe(0);
    expect(r.lines.at(-1)).toBe('summary passed=19 failed=0');
    expect(r.lines).toContain('ok every call above reused one keep-alive connection');
    expect(r.lines).toContain('ok transit.create_key/read_key/list_keys (LIST verb)');
  });
});

describe('hvac initialize and unseal against a non-dev daemon', () => {
  it('initialises with hvac defaults, then unseals a restarted daemon with the returned keys', async () => {
    const nd = await startDaemon({ tcp: true, dev: false, args: ['--keychain', 'none'] });
    let again: Daemon | undefined;
    try {
      const init = await runScript([nd.tcp!, '', 'init']);
      expect(init.failures, init.stderr).toEqual([]);
      expect(init.exitCode).toBe(0);
      const resultLine = init.lines.find((l) => l.startsWith('init-result '));
      const out = JSON.parse(resultLine!.slice('init-result '.length)) as { root_token: string; keys: string[] };
      expect(out.root_token).toMatch(/\S/);
      await nd.stop();
      again = await startDaemon({ tcp: true, dev: false, dir: nd.dir, args: ['--keychain', 'none'] });
      const un = await runScript([again.tcp!, out.root_token, 'unseal', JSON.stringify(out.keys)]);
      expect(un.failures, un.stderr).toEqual([]);
      expect(un.lines.at(-1)).toBe('summary passed=2 failed=0');
    } finally {
      await again?.stop();
      await nd.stop();
      cleanup(nd.dir);
    }
  });
});
