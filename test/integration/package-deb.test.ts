/**
 * Issue 26, part 2: the Debian package (dist/keyhold_<version>_amd64.deb, built by
 * test/support/package-binary.ts once per run) with Debian's own tools: dpkg-deb for its contents,
 * lintian (no errors; every warning explained in docs/install.md), systemd-analyze (the service's
 * exposure 2.0 or lower), and a real `dpkg -i` on this machine (root only), cleaned up with
 * `dpkg --purge`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpReq } from '../support/daemon.js';
import { ensureDeb, executableUnsupported } from '../support/package-binary.js';

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const unsupported =
  executableUnsupported() ??
  (has('dpkg-deb') ? null : 'dpkg-deb is not installed (scripts/setup-test-env.sh installs it as root)');
const sh = (cmd: string, args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}) =>
  spawnSync(cmd, args, { encoding: 'utf8', timeout: 600_000, maxBuffer: 64 << 20, ...opts });
const installDoc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'install.md'), 'utf8');

/** dpkg, waiting (up to 5 minutes) while another process holds dpkg's lock (apt-get of a test set-up). */
async function dpkg(args: string[]): Promise<ReturnType<typeof sh>> {
  for (let i = 0; ; i++) {
    const r = sh('dpkg', args, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (r.status === 0 || !/lock/i.test(r.stderr) || i >= 150) return r;
    await new Promise((res) => setTimeout(res, 2000));
  }
}

/**
 * lintian's verdict on `file`, kept beside the package under the package's SHA-256 and lintian's
 * version: the same lintian on the same bytes says the same, so CI's later passes (one per Node,
 * the .deb unchanged) reuse it instead of spending another minute.
 */
async function lintianOf(file: string): Promise<{ code: number | null; out: string }> {
  const version = sh('lintian', ['--version']).stdout.trim();
  const sum = createHash('sha256').update(readFileSync(file)).digest('hex');
  const cache = join(dirname(file), 'deb', `lintian-${sum.slice(0, 16)}-${version.replace(/[^\w.+-]/g, '_')}.json`);
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')) as { code: number | null; out: string };
  const r = await runAsync('lintian', ['--no-tag-display-limit', file]);
  if (r.code !== null) writeFileSync(cache, JSON.stringify(r));
  return r;
}

let deb: string;
let work: string;
/** lintian's output: started in beforeAll so its minute or two overlaps the other tests. */
let lintian: Promise<{ code: number | null; out: string }> | null = null;

function runAsync(cmd: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, out }));
  });
}

describe.skipIf(unsupported !== null)('Debian package', () => {
  beforeAll(async () => {
    deb = await ensureDeb();
    work = mkdtempSync(join(tmpdir(), 'keyhold-deb-'));
    if (has('lintian')) lintian = lintianOf(deb);
  }, 900_000);
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('holds the executable, the conffile, the service, man pages and completions where Debian looks', () => {
    const list = sh('dpkg-deb', ['-c', deb]);
    expect(list.status, list.stderr).toBe(0);
    const entries = new Map<string, string>();
    for (const line of list.stdout.trim().split('\n')) {
      const [mode, owner, , , , ...rest] = line.trim().split(/\s+/);
      entries.set(rest.join(' ').replace(/^\.\//, '/'), `${mode} ${owner}`);
    }
    expect(entries.get('/usr/bin/keyhold')).toBe('-rwxr-xr-x root/root');
    expect(entries.get('/etc/keyhold/keyhold.hcl')).toBe('-rw-r--r-- root/root');
    expect(entries.get('/lib/systemd/system/keyhold.service')).toBe('-rw-r--r-- root/root');
    for (const m of ['keyhold.1.gz', 'keyhold-server.1.gz', 'keyhold-transit.1.gz'])
      expect(entries.has(`/usr/share/man/man1/${m}`), m).toBe(true);
    for (const c of [
      '/usr/share/bash-completion/completions/keyhold',
      '/usr/share/zsh/vendor-completions/_keyhold',
      '/usr/share/fish/vendor_completions.d/keyhold.fish',
    ])
      expect(entries.get(c), c).toBe('-rw-r--r-- root/root');
    expect(entries.has('/usr/share/doc/keyhold/copyright')).toBe(true);
    const conffiles = sh('dpkg-deb', ['-I', deb, 'conffiles']);
    expect(conffiles.stdout.trim()).toBe('/etc/keyhold/keyhold.hcl');
    const control = sh('dpkg-deb', ['-f', deb, 'Package', 'Version', 'Architecture']);
    const version = (
      JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }
    ).version;
    expect(control.stdout).toBe(`Package: keyhold\nVersion: ${version}\nArchitecture: amd64\n`);
  });

  it('the configuration keeps storage in /var/lib/keyhold and the API on a group socket, with no TCP listener', () => {
    const x = sh('dpkg-deb', ['-x', deb, join(work, 'root')]);
    expect(x.status, x.stderr).toBe(0);
    const hcl = readFileSync(join(work, 'root', 'etc', 'keyhold', 'keyhold.hcl'), 'utf8');
    expect(hcl).toMatch(/storage "file" \{\s*path = "\/var\/lib\/keyhold"\s*\}/);
    expect(hcl).toMatch(/listener "unix" \{\s*address\s*= "\/run\/keyhold\/keyhold\.sock"\s*socket_mode = "660"\s*\}/);
    expect(hcl).not.toMatch(/listener "tcp"/);
  });

  const noAnalyze = has('systemd-analyze')
    ? ''
    : ' (skipped: systemd-analyze is not installed; scripts/setup-test-env.sh installs it as root)';
  it.skipIf(noAnalyze !== '')(`systemd-analyze security rates the service 2.0 or lower${noAnalyze}`, () => {
    const unit = join(work, 'root', 'lib', 'systemd', 'system', 'keyhold.service');
    if (!existsSync(unit)) sh('dpkg-deb', ['-x', deb, join(work, 'root')]);
    const r = sh('systemd-analyze', ['security', '--offline=true', unit]);
    const m = /Overall exposure level for keyhold\.service: (\d+\.\d+)/.exec(r.stdout + r.stderr);
    expect(m, r.stdout + r.stderr).not.toBeNull();
    expect(Number(m![1])).toBeLessThanOrEqual(2.0);
    const text = readFileSync(unit, 'utf8');
    for (const d of [
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      'ProtectHome=yes',
      'PrivateTmp=yes',
      'PrivateDevices=yes',
      'LimitCORE=0',
      'CapabilityBoundingSet=\n',
      'RuntimeDirectory=keyhold',
      'StateDirectory=keyhold',
      'User=keyhold',
    ])
      expect(text, d).toContain(d);
    expect(text).toContain('ExecStart=/usr/bin/keyhold server -config /etc/keyhold/keyhold.hcl');
  });

  const whyNotInstall =
    process.getuid?.() !== 0
      ? 'not root: dpkg -i needs root'
      : !has('dpkg')
        ? 'dpkg is not installed'
        : sh('dpkg-query', ['-W', '-f=${Status}', 'keyhold']).stdout.includes('installed')
          ? 'a keyhold package is already installed here; not touching it'
          : null;
  it.skipIf(whyNotInstall !== null)(
    `dpkg -i installs it; the server runs as the service would, operator init works over the socket; remove keeps the data, purge removes it${whyNotInstall ? ` (skipped: ${whyNotInstall})` : ''}`,
    async () => {
      let daemon: ChildProcess | null = null;
      // The package leaves its system user on purge (Debian practice); the test removes it if it made it.
      const userBefore = sh('getent', ['passwd', 'keyhold']).status === 0;
      const stopDaemon = () =>
        new Promise<void>((r) => {
          if (!daemon || daemon.exitCode !== null || daemon.signalCode) return r();
          daemon.once('exit', () => r());
          daemon.kill('SIGTERM');
        });
      try {
        const inst = await dpkg(['-i', deb]);
        expect(inst.status, inst.stdout + inst.stderr).toBe(0);
        expect(statSync('/usr/bin/keyhold').mode & 0o777).toBe(0o755);
        const uid = Number(sh('id', ['-u', 'keyhold']).stdout.trim());
        const gid = Number(sh('id', ['-g', 'keyhold']).stdout.trim());
        expect(uid).toBeGreaterThan(0);
        expect(uid).toBeLessThan(1000); // a system user
        const state = statSync('/var/lib/keyhold');
        expect([state.uid, state.mode & 0o777]).toEqual([uid, 0o700]);
        expect(existsSync('/usr/share/man/man1/keyhold.1.gz')).toBe(true);
        expect(existsSync('/usr/share/bash-completion/completions/keyhold')).toBe(true);

        // What systemd's RuntimeDirectory= and CacheDirectory= would make, then the service's command as its user.
        mkdirSync('/run/keyhold', { recursive: true, mode: 0o750 });
        chownSync('/run/keyhold', uid, gid);
        mkdirSync('/var/cache/keyhold', { recursive: true, mode: 0o700 });
        chownSync('/var/cache/keyhold', uid, gid);
        const env = { PATH: '/usr/bin:/bin', HOME: '/var/lib/keyhold', CACHE_DIRECTORY: '/var/cache/keyhold' };
        daemon = spawn('/usr/bin/keyhold', ['server', '-config', '/etc/keyhold/keyhold.hcl'], {
          uid,
          gid,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        daemon.stdout!.on('data', (c: Buffer) => (out += c.toString()));
        daemon.stderr!.on('data', (c: Buffer) => (out += c.toString()));
        const sock = '/run/keyhold/keyhold.sock';
        for (let i = 0; i < 300; i++) {
          if (daemon.exitCode !== null) throw new Error(`server exited ${daemon.exitCode}: ${out}`);
          if (
            existsSync(sock) &&
            (await httpReq({ socket: sock }, 'GET', 'sys/health').then(
              () => true,
              () => false,
            ))
          )
            break;
          await new Promise((r) => setTimeout(r, 100));
        }
        const s = statSync(sock);
        expect([s.uid, s.gid, s.mode & 0o777], out).toEqual([uid, gid, 0o660]);
        expect(out).not.toMatch(/Listening on: https?:/);
        const cli = {
          ...process.env,
          KEYHOLD_ADDR: `unix://${sock}`,
          KEYHOLD_HOME: join(work, 'cli-home'),
          NO_COLOR: '1',
        };
        const init = sh('/usr/bin/keyhold', ['operator', 'init', '--no-keychain'], { env: cli });
        expect(init.status, init.stderr).toBe(0);
        const token = /Initial Root Token: (\S+)/.exec(init.stdout)![1]!;
        const authed = { ...cli, KEYHOLD_TOKEN: token };
        expect(sh('/usr/bin/keyhold', ['secrets', 'enable', '-path=secret', 'kv-v2'], { env: authed }).status).toBe(0);
        expect(sh('/usr/bin/keyhold', ['kv', 'put', 'secret/kept', 'v=survives'], { env: authed }).status).toBe(0);
        await stopDaemon();
        expect(readFileSync('/var/lib/keyhold/FORMAT', 'utf8')).toMatch(/"format"/);

        // Reinstalling (dpkg's upgrade path) keeps the data and the configuration.
        const again = await dpkg(['-i', deb]);
        expect(again.status, again.stdout + again.stderr).toBe(0);
        daemon = spawn('/usr/bin/keyhold', ['server', '-config', '/etc/keyhold/keyhold.hcl'], {
          uid,
          gid,
          env,
          stdio: 'ignore',
        });
        for (
          let i = 0;
          i < 300 &&
          !(await httpReq({ socket: sock }, 'GET', 'sys/health').then(
            () => true,
            () => false,
          ));
          i++
        )
          await new Promise((r) => setTimeout(r, 100));
        const key = /Unseal Key 1: (\S+)/.exec(init.stdout)![1]!;
        expect(sh('/usr/bin/keyhold', ['operator', 'unseal'], { env: cli, input: key + '\n' }).status).toBe(0);
        expect(sh('/usr/bin/keyhold', ['kv', 'get', '-field=v', 'secret/kept'], { env: authed }).stdout).toBe(
          'survives',
        );
        await stopDaemon();

        const rm = await dpkg(['-r', 'keyhold']);
        expect(rm.status, rm.stderr).toBe(0);
        expect(existsSync('/usr/bin/keyhold')).toBe(false);
        expect(existsSync('/var/lib/keyhold/log')).toBe(true);
        expect(existsSync('/etc/keyhold/keyhold.hcl')).toBe(true); // a conffile stays until purge
        const purge = await dpkg(['--purge', 'keyhold']);
        expect(purge.status, purge.stderr).toBe(0);
        expect(existsSync('/var/lib/keyhold')).toBe(false);
        expect(existsSync('/etc/keyhold/keyhold.hcl')).toBe(false);
        expect(sh('getent', ['passwd', 'keyhold']).status).toBe(0); // the user stays (docs/install.md)
      } finally {
        await stopDaemon();
        await dpkg(['--purge', 'keyhold']);
        rmSync('/run/keyhold', { recursive: true, force: true });
        if (!userBefore) sh('deluser', ['--system', 'keyhold']);
      }
    },
    600_000,
  );

  // Last: lintian has been running since beforeAll, alongside the tests above.
  const noLintian = has('lintian')
    ? ''
    : ' (skipped: lintian is not installed; scripts/setup-test-env.sh installs it as root)';
  it.skipIf(noLintian !== '')(
    `lintian reports no errors, and every warning is explained in docs/install.md${noLintian}`,
    async () => {
      const r = await lintian!;
      const lines = r.out.split('\n');
      const errors = lines.filter((l) => /^E: /.test(l));
      expect(errors, errors.join('\n')).toEqual([]);
      expect(r.code, r.out.slice(-2000)).toBe(0); // lintian's exit status: 0 when no error was found
      const warnings = [
        ...new Set(lines.filter((l) => /^W: /.test(l)).map((l) => /^W: keyhold: (\S+)/.exec(l)?.[1] ?? l)),
      ];
      for (const w of warnings)
        expect(installDoc, `lintian warning ${w} is not explained in docs/install.md`).toContain(`\`${w}\``);
    },
    900_000,
  );
});
