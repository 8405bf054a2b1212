/**
 * The user-service files of `keyhold service install`: the systemd unit checked by systemd's own
 * `systemd-analyze --user verify` (a real parser of units, with the man page it names), the launchd
 * plist parsed by Python's plistlib (an independent plist reader; launchd itself is macOS-only).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  LAUNCHD_LABEL,
  launchdPlist,
  managerOf,
  serviceFile,
  systemdQuote,
  systemdUnit,
  type ServiceSpec,
} from '../../../src/cli/service.js';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'keyhold-service-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

/** systemd-analyze --user verify of `text` as keyhold.service: exit status and everything it printed. */
function verify(text: string): { status: number | null; out: string } {
  const unitDir = mkdtempSync(join(dir, 'unit-'));
  const file = join(unitDir, 'keyhold.service');
  writeFileSync(file, text);
  // The unit's Documentation= names keyhold-server(1): give verify the generated page to find.
  const man = join(dir, 'man');
  mkdirSync(join(man, 'man1'), { recursive: true });
  copyFileSync(join(ROOT, 'man', 'keyhold-server.1'), join(man, 'man1', 'keyhold-server.1'));
  const runtime = join(dir, 'runtime');
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  const r = spawnSync('systemd-analyze', ['--user', 'verify', file], {
    encoding: 'utf8',
    cwd: unitDir,
    env: { ...process.env, XDG_RUNTIME_DIR: runtime, MANPATH: man },
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}`.trim() };
}

const spec = (over: Partial<ServiceSpec> = {}): ServiceSpec => ({
  node: process.execPath,
  script: join(ROOT, 'bin', 'keyhold.js'),
  env: {},
  ...over,
});

describe('systemd user unit', () => {
  it('runs `keyhold server` with this node, restarts on failure, starts at login, and sets no socket', () => {
    const u = systemdUnit(spec({ config: '/etc/keyhold/server.json' }));
    expect(u).toContain(
      `ExecStart="${process.execPath}" "${join(ROOT, 'bin', 'keyhold.js')}" "server" "--config" "/etc/keyhold/server.json"\n`,
    );
    expect(u).toMatch(/^Restart=on-failure$/m);
    expect(u).toMatch(/^WantedBy=default\.target$/m);
    expect(u).not.toContain('--socket');
    expect(systemdUnit(spec())).not.toContain('--config');
  });

  it('quotes every word so systemd passes it on unchanged (%, $, quotes, backslashes)', () => {
    expect(systemdQuote('/a b/50%/$HOME/"x"\\y')).toBe('"/a b/50%%/$$HOME/\\"x\\"\\\\y"');
    expect(systemdQuote('KEYHOLD_HOME=/h/$x', false)).toBe('"KEYHOLD_HOME=/h/$x"');
    expect(() => systemdQuote('a\nb')).toThrow(/newline/);
    expect(systemdUnit(spec({ env: { KEYHOLD_HOME: '/home/me/key hold' } }))).toMatch(
      /^Environment="KEYHOLD_HOME=\/home\/me\/key hold"$/m,
    );
  });

  it.skipIf(!has('systemd-analyze'))('passes systemd-analyze --user verify without a single warning', () => {
    const r = verify(
      systemdUnit(spec({ config: join(ROOT, 'package.json'), env: { KEYHOLD_HOME: join(dir, 'home 50%') } })),
    );
    expect(r.out).toBe('');
    expect(r.status).toBe(0);
  });

  it.skipIf(!has('systemd-analyze'))(
    'the verifier is not a rubber stamp: a misspelt key or a missing binary is reported',
    () => {
      expect(verify(systemdUnit(spec()).replace('Restart=on-failure', 'Restrat=on-failure')).out).toContain(
        "Unknown key 'Restrat'",
      );
      const missing = verify(systemdUnit(spec({ node: '/nonexistent/node' })));
      expect(missing.status).not.toBe(0);
      expect(missing.out).toContain('/nonexistent/node');
    },
  );
});

describe('launchd agent plist', () => {
  const plist = (s: ServiceSpec) => {
    const r = spawnSync(
      'python3',
      ['-c', 'import json,plistlib,sys; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))'],
      { input: launchdPlist(s, { HOME: '/Users/me' }), encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };

  it.skipIf(!has('python3'))('parses as a plist with the program, restart on failure and start at login', () => {
    const p = plist(
      spec({
        node: '/opt/node & co/bin/node',
        script: '/Users/me/<keyhold>/bin/keyhold.js',
        config: '/Users/me/k.json',
        env: { KEYHOLD_HOME: '/Users/me/kh' },
      }),
    );
    expect(p).toMatchObject({
      Label: LAUNCHD_LABEL,
      ProgramArguments: [
        '/opt/node & co/bin/node',
        '/Users/me/<keyhold>/bin/keyhold.js',
        'server',
        '--config',
        '/Users/me/k.json',
      ],
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
      Umask: 0o077,
      EnvironmentVariables: { KEYHOLD_HOME: '/Users/me/kh' },
      StandardErrorPath: '/Users/me/Library/Logs/keyhold.log',
    });
    expect(plist(spec())).not.toHaveProperty('EnvironmentVariables');
    expect((plist(spec()).ProgramArguments as string[]).includes('--socket')).toBe(false);
  });
});

describe('where the files go', () => {
  it('systemd on Linux, launchd on macOS, nothing elsewhere', () => {
    expect(managerOf('linux')).toBe('systemd');
    expect(managerOf('darwin')).toBe('launchd');
    expect(managerOf('win32')).toBeNull();
    expect(serviceFile('systemd', { HOME: '/home/me' })).toBe('/home/me/.config/systemd/user/keyhold.service');
    expect(serviceFile('systemd', { HOME: '/home/me', XDG_CONFIG_HOME: '/cfg' })).toBe(
      '/cfg/systemd/user/keyhold.service',
    );
    expect(serviceFile('launchd', { HOME: '/Users/me' })).toBe(`/Users/me/Library/LaunchAgents/${LAUNCHD_LABEL}.plist`);
  });
});
