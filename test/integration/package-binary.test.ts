/**
 * Issue 26, part 1: the single executable (dist/bin/keyhold-linux-x64, built by test/support/
 * package-binary.ts once per run). It is copied to a temporary folder and run with a PATH holding no
 * Node.js: only a `node` shim that records that it was run and fails loudly.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { httpReq } from '../support/daemon.js';
import { ensureExecutable, executableUnsupported } from '../support/package-binary.js';
import { SOFTHSM_MODULE, createSoftHsm, softhsmMissing } from '../support/softhsm.js';
import { startMoto } from '../support/moto.js';

const unsupported = executableUnsupported();
let dir: string;
let exe: string;
let shimMarker: string;
let env: Record<string, string>;

/** Environment with no Node.js: PATH is the shim folder and an empty folder, nothing from the parent. */
function baseEnv(home: string): Record<string, string> {
  const bin = join(dir, 'shim');
  const empty = join(dir, 'empty-bin');
  return {
    PATH: `${bin}:${empty}`,
    HOME: home,
    KEYHOLD_HOME: home,
    NO_COLOR: '1',
    KEYHOLD_NATIVE_CACHE: join(dir, 'native-cache'),
    ...(process.env.DBUS_SESSION_BUS_ADDRESS ? { DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS } : {}),
  };
}

function run(args: string[], opts: { input?: string; env?: Record<string, string> } = {}) {
  return execa(exe, args, {
    input: opts.input,
    env: { ...env, ...opts.env },
    extendEnv: false,
    reject: false,
    timeout: 60_000,
  });
}

function startServer(
  sock: string,
  data: string,
  extra: string[] = [],
  e: Record<string, string> = env,
): { proc: ChildProcess; out: () => string } {
  const proc = spawn(exe, ['server', '--socket', sock, '--storage-path', data, '--log-level', 'warn', ...extra], {
    env: e,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return { proc, out: () => out };
}

async function waitUp(sock: string, d: { proc: ChildProcess; out: () => string }): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (d.proc.exitCode !== null) throw new Error(`daemon exited ${d.proc.exitCode}: ${d.out()}`);
    try {
      await httpReq({ socket: sock }, 'GET', 'sys/health');
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`daemon did not start: ${d.out()}`);
}

function stop(p: ChildProcess): Promise<void> {
  return new Promise((r) => {
    if (p.exitCode !== null || p.signalCode) return r();
    p.once('exit', () => r());
    p.kill('SIGTERM');
  });
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.skipIf(unsupported !== null)('single executable (dist/bin/keyhold-linux-x64)', () => {
  beforeAll(async () => {
    const built = await ensureExecutable();
    dir = mkdtempSync(join(tmpdir(), 'keyhold-exe-'));
    exe = join(dir, 'keyhold');
    copyFileSync(built, exe);
    chmodSync(exe, 0o755);
    mkdirSync(join(dir, 'shim'));
    mkdirSync(join(dir, 'empty-bin'));
    shimMarker = join(dir, 'node-was-run');
    writeFileSync(
      join(dir, 'shim', 'node'),
      `#!/bin/sh\necho "node was run: $*" >> '${shimMarker}'\necho "FAIL: the keyhold executable ran node" >&2\nexit 99\n`,
    );
    chmodSync(join(dir, 'shim', 'node'), 0o755);
    env = baseEnv(join(dir, 'home'));
  }, 600_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the node shim on PATH fails loudly (so a hidden use of node would show)', async () => {
    const r = await execa('node', ['-e', '0'], { env, extendEnv: false, reject: false });
    expect(r.exitCode).toBe(99);
    expect(existsSync(shimMarker)).toBe(true);
    rmSync(shimMarker);
  });

  it('`version` and `-version` print the version, the commit, the build date and the Node.js inside', async () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    for (const args of [['version'], ['-version']]) {
      const r = await run(args);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toMatch(
        new RegExp(
          `^keyhold v${pkg.version.replace(/\./g, '\\.')} \\(([0-9a-f]{40}(-dirty)?)\\), built \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, Node\\.js v(\\d+)\\.\\d+\\.\\d+ \\(single executable\\)$`,
        ),
      );
      expect(Number(/Node\.js v(\d+)/.exec(r.stdout)![1])).toBeGreaterThanOrEqual(24);
    }
    const j = await run(['version', '--format', 'json']);
    expect(JSON.parse(j.stdout)).toMatchObject({ version: pkg.version, runtime: 'executable' });
    expect((await run(['--version'])).stdout).toBe(pkg.version);
    expect(existsSync(shimMarker)).toBe(false);
  });

  it('runs the daemon and a CLI session with no Node.js on PATH', async () => {
    const sock = join(dir, 'k.sock');
    const d = startServer(sock, join(dir, 'data'), ['--keychain', 'none']);
    try {
      await waitUp(sock, d);
      const cli = { KEYHOLD_ADDR: `unix://${sock}` };
      const init = await run(['operator', 'init', '--no-keychain'], { env: cli });
      expect(init.exitCode, init.stderr).toBe(0);
      const token = /Initial Root Token: (\S+)/.exec(init.stdout)![1]!;
      const authed = { ...cli, KEYHOLD_TOKEN: token };
      expect((await run(['secrets', 'enable', 'transit'], { env: authed })).exitCode).toBe(0);
      expect((await run(['write', '-f', 'transit/keys/app', 'type=ed25519'], { env: authed })).exitCode).toBe(0);
      expect((await run(['write', '-f', 'transit/keys/data'], { env: authed })).exitCode).toBe(0);
      const ct = await run(['transit', 'encrypt', 'data', '--field', 'ciphertext'], {
        env: authed,
        input: 'hello from the executable',
      });
      expect(ct.exitCode, ct.stderr).toBe(0);
      expect(ct.stdout).toMatch(/^vault:v1:/);
      const pt = await run(['transit', 'decrypt', 'data', ct.stdout], { env: authed });
      expect(pt.exitCode, pt.stderr).toBe(0);
      expect(pt.stdout).toBe('hello from the executable');
      const sig = await run(
        ['write', '-field=signature', 'transit/sign/app', `input=${Buffer.from('m').toString('base64')}`],
        { env: authed },
      );
      expect(sig.stdout).toMatch(/^vault:v1:/);
      expect((await run(['secrets', 'enable', '-path=secret', 'kv-v2'], { env: authed })).exitCode).toBe(0);
      expect((await run(['kv', 'put', 'secret/app', 'password=p4ss'], { env: authed })).exitCode).toBe(0);
      expect((await run(['kv', 'get', '-field=password', 'secret/app'], { env: authed })).stdout).toBe('p4ss');
      // userpass: bcrypt runs on the embedded worker script, not on the event loop (password-hash.ts
      // warns once when it has to fall back).
      expect((await run(['auth', 'enable', 'userpass'], { env: authed })).exitCode).toBe(0);
      const pw = await run(['write', 'auth/userpass/users/ada', 'password=-'], { env: authed, input: 's3cret-pass' });
      expect(pw.exitCode, pw.stderr).toBe(0);
      const login = await httpReq({ socket: sock }, 'POST', 'auth/userpass/login/ada', { password: 's3cret-pass' });
      expect(login.status).toBe(200);
      expect((login.body as { auth: { client_token: string } }).auth.client_token).toMatch(/^hv[sb]\./);
      const wrong = await httpReq({ socket: sock }, 'POST', 'auth/userpass/login/ada', { password: 'nope' });
      expect(wrong.status).toBe(400);
      expect(d.out()).not.toContain('KEYHOLD_BCRYPT_INLINE');
      const st = await run(['status'], { env: authed });
      expect(st.exitCode).toBe(0);
      expect(st.stdout).toMatch(/Sealed\s+false/i);
      // Sealed and unsealed again through the executable.
      expect((await run(['operator', 'seal'], { env: authed })).exitCode).toBe(0);
      const key = /Unseal Key 1: (\S+)/.exec(init.stdout)![1]!;
      expect((await run(['operator', 'unseal'], { env: cli, input: key + '\n' })).exitCode).toBe(0);
      expect((await run(['transit', 'decrypt', 'data', ct.stdout], { env: authed })).stdout).toBe(
        'hello from the executable',
      );
    } finally {
      await stop(d.proc);
    }
    expect(existsSync(shimMarker), existsSync(shimMarker) ? readFileSync(shimMarker, 'utf8') : '').toBe(false);
  });

  it('opens and upgrades the store-v0 fixture (written before format versions) and decrypts its ciphertexts', async () => {
    const fixture = join(import.meta.dirname, '..', 'fixtures', 'store-v0');
    const expected = JSON.parse(readFileSync(join(fixture, 'expected.json'), 'utf8')) as {
      root_token: string;
      transit: Record<string, { versions: Record<string, { ciphertext?: string; plaintext?: string }> }>;
    };
    const data = join(dir, 'fixture-data');
    cpSync(join(fixture, 'data'), data, { recursive: true });
    const sock = join(dir, 'fixture.sock');
    const d = startServer(sock, data, ['--keychain', 'none']);
    try {
      await waitUp(sock, d);
      const key = readFileSync(join(fixture, 'unseal-key.txt'), 'utf8').trim();
      expect(
        (await run(['operator', 'unseal'], { env: { KEYHOLD_ADDR: `unix://${sock}` }, input: key + '\n' })).exitCode,
      ).toBe(0);
      const v = expected.transit['k-aes256-gcm96']!.versions['1']!;
      const pt = await run(['transit', 'decrypt', 'k-aes256-gcm96', v.ciphertext!], {
        env: { KEYHOLD_ADDR: `unix://${sock}`, KEYHOLD_TOKEN: expected.root_token },
      });
      expect(pt.exitCode, pt.stderr).toBe(0);
      expect(pt.stdout).toBe(Buffer.from(v.plaintext!, 'base64').toString());
    } finally {
      await stop(d.proc);
    }
    expect(JSON.parse(readFileSync(join(data, 'FORMAT'), 'utf8'))).toEqual({ format: 1 });
  });

  it('unpacks native addons to a private cache (0700) and replaces a tampered copy instead of loading it', async () => {
    const cache = join(dir, 'native-cache');
    // operator init with the keychain on loads @napi-rs/keyring (whether or not a Secret Service answers).
    const initWithKeychain = async (name: string) => {
      const sock = join(dir, `${name}.sock`);
      const d = startServer(sock, join(dir, name));
      try {
        await waitUp(sock, d);
        const init = await run(['operator', 'init'], { env: { KEYHOLD_ADDR: `unix://${sock}` } });
        expect(init.exitCode, init.stderr).toBe(0);
        return d.out();
      } finally {
        await stop(d.proc);
      }
    };
    await initWithKeychain('kc1');
    const st = statSync(cache);
    expect(st.mode & 0o777).toBe(0o700);
    expect(st.uid).toBe(process.getuid!());
    const files = readdirSync(cache).filter((f) => f.endsWith('keyring.linux-x64-gnu.node'));
    expect(files).toHaveLength(1);
    const file = join(cache, files[0]!);
    const original = readFileSync(file);
    expect(files[0]!.startsWith(sha(original).slice(0, 16))).toBe(true);
    // Tamper: garbage where the library was (dlopen of it would fail with "invalid ELF header").
    chmodSync(file, 0o700);
    writeFileSync(file, Buffer.from('not a shared library, swapped in by someone else'));
    const out = await initWithKeychain('kc2');
    expect(out).not.toMatch(/ELF|invalid|dlopen/i);
    expect(sha(readFileSync(file))).toBe(sha(original));
    expect(existsSync(shimMarker)).toBe(false);
  });

  it.skipIf(softhsmMissing() !== null)(
    'runs PKCS#11 managed keys (the embedded worker script and the pkcs11js addon) on SoftHSM2',
    async () => {
      const hsm = createSoftHsm();
      const sock = join(dir, 'hsm.sock');
      try {
        hsm.initToken('kh', '1234');
        const cfg = join(dir, 'hsm.hcl');
        writeFileSync(cfg, `kms_library "pkcs11" {\n  name    = "softhsm"\n  library = "${SOFTHSM_MODULE}"\n}\n`);
        const d = startServer(sock, join(dir, 'hsm-data'), ['--dev', '--dev-root-token', 'root', '--config', cfg], {
          ...env,
          ...hsm.env,
        });
        try {
          await waitUp(sock, d);
          const req = (m: string, p: string, body?: unknown) =>
            httpReq({ socket: sock }, m, p, body, { token: 'root' });
          const mk = await req('POST', 'sys/managed-keys/pkcs11/rsa1', {
            library: 'softhsm',
            token_label: 'kh',
            pin: '1234',
            key_label: 'rsa1',
            mechanism: '0x0001',
            key_bits: 2048,
            allow_generate_key: true,
            usages: 'sign,verify',
          });
          expect(mk.status, JSON.stringify(mk.body) + d.out()).toBe(204);
          expect((await req('POST', 'sys/managed-keys/pkcs11/rsa1/test/sign', {})).status).toBe(204);
          expect((await req('POST', 'sys/mounts/transit/tune', { allowed_managed_keys: ['rsa1'] })).status).toBe(204);
          expect(
            (await req('POST', 'transit/keys/hsm-signer', { type: 'managed_key', managed_key_name: 'rsa1' })).status,
          ).toBeLessThan(300);
          const input = Buffer.from('signed inside the HSM').toString('base64');
          const sig = await req('POST', 'transit/sign/hsm-signer', { input });
          expect(sig.status, JSON.stringify(sig.body)).toBe(200);
          const ver = await req('POST', 'transit/verify/hsm-signer', { input, signature: sig.body.data.signature });
          expect(ver.body.data.valid).toBe(true);
        } finally {
          await stop(d.proc);
        }
        expect(readdirSync(join(dir, 'native-cache')).some((f) => f.endsWith('-pkcs11.node'))).toBe(true);
      } finally {
        hsm.cleanup();
      }
      expect(existsSync(shimMarker)).toBe(false);
    },
  );
  const noMoto = spawnSync('python3', ['-c', 'import moto.server'], { stdio: 'ignore' }).status !== 0;
  it.skipIf(noMoto)('syncs a KV secret to AWS Secrets Manager (moto) through the bundled AWS SDK', async () => {
    const moto = await startMoto();
    const sock = join(dir, 'sync.sock');
    const d = startServer(sock, join(dir, 'sync-data'), ['--dev', '--dev-root-token', 'root']);
    try {
      await waitUp(sock, d);
      const req = (m: string, p: string, body?: unknown) => httpReq({ socket: sock }, m, p, body, { token: 'root' });
      expect((await req('POST', 'secret/data/app/web', { data: { API_KEY: 'from-the-executable' } })).status).toBe(200);
      const dest = await req('POST', 'sys/sync/destinations/provider-a-sm/aws', {
        access_key_id: 'testing',
        secret_access_key: 'testing',
        region: 'us-east-1',
        endpoint_url: moto.endpoint,
        allowed_ipv4_addresses: ['127.0.0.1/32'],
        allowed_ports: [moto.port],
      });
      expect(dest.status, JSON.stringify(dest.body)).toBeLessThan(300);
      expect(
        (
          await req('POST', 'sys/sync/destinations/provider-a-sm/aws/associations/set', {
            mount: 'secret',
            secret_name: 'app/web',
          })
        ).status,
      ).toBe(200);
      let status: string[] = [];
      for (let i = 0; i < 300; i++) {
        const a = await req('GET', 'sys/sync/destinations/provider-a-sm/aws/associations');
        status = Object.values((a.body?.data?.associated_secrets ?? {}) as Record<string, { sync_status: string }>).map(
          (x) => x.sync_status,
        );
        if (status.length && status.every((x) => x === 'SYNCED')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(status, d.out()).toEqual(['SYNCED']);
    } finally {
      await stop(d.proc);
      await moto.stop();
    }
    expect(existsSync(shimMarker)).toBe(false);
  });
});
