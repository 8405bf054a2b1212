/**
 * `keyhold service install|status|uninstall` end to end on Linux. No systemd user manager runs in
 * this container (`systemd --user` needs systemd as PID 1 and cgroup v2), so a stand-in `systemctl`
 * on PATH does what the real one does with a user unit: refuses a missing unit file, has systemd's
 * own `systemd-analyze --user verify` check it (any warning is a failure), then runs its ExecStart
 * with its Environment= for real, and stops it with SIGTERM on `disable --now`. The daemon it starts
 * must then be found by the CLI with no address given: that is the contract of the unit.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanup } from '../support/daemon.js';

const FAKE_SYSTEMCTL = String.raw`#!/usr/bin/env node
// Stand-in for systemctl --user (see the test's header).
const fs = require('node:fs'), path = require('node:path'), cp = require('node:child_process');
const args = process.argv.slice(2);
fs.appendFileSync(process.env.FAKE_SYSTEMCTL_LOG, args.join(' ') + '\n');
if (args[0] !== '--user') { console.error('fake systemctl: only --user'); process.exit(1); }
const unit = path.join(process.env.XDG_CONFIG_HOME, 'systemd', 'user', 'keyhold.service');
const stateFile = process.env.FAKE_SYSTEMCTL_STATE;
const state = fs.existsSync(stateFile) ? JSON.parse(fs.readFileSync(stateFile, 'utf8')) : { enabled: false, pid: 0 };
const save = () => fs.writeFileSync(stateFile, JSON.stringify(state));
const alive = (pid) => { try { return pid > 0 && (process.kill(pid, 0), true); } catch { return false; } };
const words = (s) => [...s.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1].replace(/\\(.)/g, '$1').replace(/%%/g, '%').replace(/\$\$/g, '$'));
const [, verb, ...rest] = args;
if (verb === 'daemon-reload') process.exit(0);
if (verb === 'enable') {
  if (rest[0] !== '--now' || rest[1] !== 'keyhold.service') { console.error('fake systemctl: expected enable --now keyhold.service'); process.exit(1); }
  if (!fs.existsSync(unit)) { console.error('Failed to enable unit: Unit file keyhold.service does not exist.'); process.exit(1); }
  const text = fs.readFileSync(unit, 'utf8');
  if (!/^\[Install\]\nWantedBy=default\.target$/m.test(text)) { console.error('The unit files have no installation config'); process.exit(1); }
  const v = cp.spawnSync('systemd-analyze', ['--user', 'verify', '--man=no', unit], { encoding: 'utf8' });
  if (v.status !== 0 || (v.stdout + v.stderr).trim()) { console.error('verify: ' + v.stdout + v.stderr); process.exit(1); }
  const exec = words(/^ExecStart=(.*)$/m.exec(text)[1]);
  const env = { ...process.env };
  for (const m of text.matchAll(/^Environment=(.*)$/gm)) for (const w of words(m[1])) { const i = w.indexOf('='); env[w.slice(0, i)] = w.slice(i + 1); }
  const out = fs.openSync(process.env.FAKE_SYSTEMCTL_LOG + '.daemon', 'a');
  const child = cp.spawn(exec[0], exec.slice(1), { env, detached: true, stdio: ['ignore', out, out] });
  child.unref();
  Object.assign(state, { enabled: true, pid: child.pid });
  save();
  process.exit(0);
}
if (verb === 'disable') {
  if (alive(state.pid)) process.kill(state.pid, 'SIGTERM');
  const end = Date.now() + 15000;
  while (alive(state.pid) && Date.now() < end) cp.spawnSync('sleep', ['0.1']);
  Object.assign(state, { enabled: false, pid: 0 });
  save();
  process.exit(0);
}
if (verb === 'is-enabled') { console.log(state.enabled ? 'enabled' : 'disabled'); process.exit(state.enabled ? 0 : 1); }
if (verb === 'is-active') { const a = alive(state.pid); console.log(a ? 'active' : 'inactive'); process.exit(a ? 0 : 3); }
console.error('fake systemctl: unknown verb ' + verb);
process.exit(1);
`;

const hasAnalyze = spawnSync('sh', ['-c', 'command -v systemd-analyze']).status === 0;

describe.skipIf(process.platform !== 'linux' || !hasAnalyze)('keyhold service on Linux (systemd user unit)', () => {
  let dir: string;
  let env: Record<string, string | undefined>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kh-svc-'));
    const fakeBin = join(dir, 'fakebin');
    mkdirSync(fakeBin);
    writeFileSync(join(fakeBin, 'systemctl'), FAKE_SYSTEMCTL);
    chmodSync(join(fakeBin, 'systemctl'), 0o755);
    const runtime = join(dir, 'run');
    mkdirSync(runtime, { mode: 0o700 });
    // A user's environment: no address or token of a test daemon, defaults under this folder.
    env = {
      PATH: `${fakeBin}:${process.env.PATH}`,
      HOME: join(dir, 'home'),
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_DATA_HOME: join(dir, 'data'),
      XDG_RUNTIME_DIR: runtime,
      KEYHOLD_HOME: undefined,
      KEYHOLD_ADDR: undefined,
      VAULT_ADDR: undefined,
      KEYHOLD_TOKEN: undefined,
      VAULT_TOKEN: undefined,
      NO_COLOR: '1',
      FAKE_SYSTEMCTL_LOG: join(dir, 'systemctl.log'),
      FAKE_SYSTEMCTL_STATE: join(dir, 'systemctl.state'),
    };
    writeFileSync(
      join(dir, 'server.json'),
      JSON.stringify({ storage: { type: 'file', path: join(dir, 'storage') }, keychain: 'none', log_level: 'warn' }),
    );
  });
  afterAll(async () => {
    await cli(['service', 'uninstall']).catch(() => undefined);
    cleanup(dir);
  });

  const cli = (args: string[]) =>
    execa(process.execPath, [BIN, ...args], { env, extendEnv: true, reject: false, timeout: 60_000 });

  it('install writes the unit, enables and starts it; the CLI finds the daemon with no address given', async () => {
    const r = await cli(['service', 'install', '--config', join(dir, 'server.json')]);
    expect(r.exitCode, r.stderr).toBe(0);
    const unitFile = join(dir, 'config', 'systemd', 'user', 'keyhold.service');
    expect(r.stderr).toContain(`keyhold.service written to ${unitFile}, enabled and started`);
    expect(r.stderr).toContain(`unix://${join(dir, 'run', 'keyhold', 'keyhold.sock')}, where the CLI looks by default`);
    expect(readFileSync(unitFile, 'utf8')).toContain(`"--config" "${join(dir, 'server.json')}"`);
    expect(readFileSync(join(dir, 'systemctl.log'), 'utf8').split('\n')).toEqual(
      expect.arrayContaining(['--user daemon-reload', '--user enable --now keyhold.service']),
    );
    // The daemon started by the unit answers on the default socket (sealed: never initialised).
    let st = await cli(['status', '--format', 'json']);
    for (let i = 0; i < 100 && st.exitCode === 1; i++) {
      await new Promise((res) => setTimeout(res, 100));
      st = await cli(['status', '--format', 'json']);
    }
    expect(
      st.exitCode,
      `${st.stderr}\n${existsSync(join(dir, 'systemctl.log.daemon')) ? readFileSync(join(dir, 'systemctl.log.daemon'), 'utf8') : ''}`,
    ).toBe(2);
    expect(JSON.parse(st.stdout)).toMatchObject({ initialized: false, sealed: true });
  });

  it('status reports the unit enabled and active and the daemon answering', async () => {
    const r = await cli(['service', 'status', '--format', 'json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      manager: 'systemd',
      installed: true,
      enabled: 'enabled',
      active: 'active',
      socket: `unix://${join(dir, 'run', 'keyhold', 'keyhold.sock')}`,
    });
    expect(JSON.parse(r.stdout).daemon).toMatch(/^answering \(sealed: true/);
  });

  it('uninstall stops the daemon (its socket goes) and removes the unit; status then exits 1', async () => {
    const r = await cli(['service', 'uninstall']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(join(dir, 'config', 'systemd', 'user', 'keyhold.service'))).toBe(false);
    expect(readFileSync(join(dir, 'systemctl.log'), 'utf8')).toContain('--user disable --now keyhold.service');
    expect(existsSync(join(dir, 'run', 'keyhold', 'keyhold.sock'))).toBe(false);
    const s = await cli(['service', 'status', '--format', 'json']);
    expect(s.exitCode).toBe(1);
    expect(JSON.parse(s.stdout)).toMatchObject({
      installed: false,
      enabled: 'disabled',
      active: 'inactive',
      daemon: 'not answering',
    });
    expect((await cli(['service', 'uninstall'])).stderr).toContain('Nothing to remove');
  });

  it('install refuses a config file that does not exist, writing nothing', async () => {
    const r = await cli(['service', 'install', '--config', join(dir, 'nope.json')]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`--config: ${join(dir, 'nope.json')} is not a file`);
    expect(existsSync(join(dir, 'config', 'systemd', 'user', 'keyhold.service'))).toBe(false);
  });

  it('install --no-start only writes the unit; a failing systemctl is reported with its message', async () => {
    const r = await cli(['service', 'install', '--no-start']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('(not started: --no-start)');
    // A systemctl that cannot reach a user manager, as on this machine without the stand-in.
    const broken = join(dir, 'brokenbin');
    mkdirSync(broken);
    writeFileSync(
      join(broken, 'systemctl'),
      '#!/bin/sh\necho "Failed to connect to bus: No medium found" >&2\nexit 1\n',
    );
    chmodSync(join(broken, 'systemctl'), 0o755);
    const f = await execa(process.execPath, [BIN, 'service', 'install'], {
      env: { ...env, PATH: `${broken}:${process.env.PATH}` },
      extendEnv: true,
      reject: false,
    });
    expect(f.exitCode).toBe(1);
    expect(f.stderr).toContain(
      'systemctl --user daemon-reload failed: Failed to connect to bus: No medium found (the unit is written at',
    );
    await cli(['service', 'uninstall']);
  });
});
