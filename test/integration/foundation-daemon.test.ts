import { spawn, type ChildProcess } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @peculiar/x509 (an independent X.509 implementation) needs a Reflect polyfill; the transit tests' loader provides one.
import { loadX509 } from '../unit/transit-keys/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cleanup, httpReq, startDaemon, type Daemon } from '../support/daemon.js';
import { rawConnect, rawRequest } from './foundation-raw-http.js';

const dirs: string[] = [];
const procs: ChildProcess[] = [];
const daemons: Daemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.kill();
  for (const p of procs) if (p.exitCode === null && !p.signalCode) p.kill('SIGKILL');
  for (const dir of dirs) cleanup(dir);
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'keyhold-daemon-'));
  dirs.push(d);
  return d;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Spawn `keyhold server ...` directly (no helper defaults), collecting its output. */
function spawnServer(
  args: string[],
  env: Record<string, string | undefined>,
): { proc: ChildProcess; out: () => string; exit: Promise<number | null> } {
  const proc = spawn(process.execPath, [BIN, 'server', ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.push(proc);
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c));
  proc.stderr!.on('data', (c: Buffer) => (out += c));
  const exit = new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
  return { proc, out: () => out, exit };
}
async function waitFor(cond: () => boolean, what: string, out: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (cond()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}: ${out()}`);
}
async function stopProc(
  p: { proc: ChildProcess; exit: Promise<number | null> },
  sig: NodeJS.Signals = 'SIGTERM',
): Promise<number | null> {
  p.proc.kill(sig);
  return p.exit;
}

async function selfSigned(dir: string): Promise<{ cert: string; key: string }> {
  const x509 = await loadX509();
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=keyhold test',
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingAlgorithm: alg,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.SubjectAlternativeNameExtension([
        { type: 'ip', value: '127.0.0.1' },
        { type: 'dns', value: 'localhost' },
      ]),
    ],
  });
  const pkcs8 = Buffer.from(
    await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as unknown as webcrypto.CryptoKey),
  );
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END PRIVATE KEY-----\n`;
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  writeFileSync(certFile, cert.toString('pem'));
  writeFileSync(keyFile, keyPem, { mode: 0o600 });
  return { cert: certFile, key: keyFile };
}

describe('listeners', () => {
  it('puts the default socket (0600) in a private runtime folder (0700) under KEYHOLD_HOME', async () => {
    const home = tmp();
    const s = spawnServer(['--dev', '--dev-root-token', 'root', '--log-level', 'warn'], { KEYHOLD_HOME: home });
    const sock = join(home, 'run', 'keyhold.sock');
    await waitFor(() => existsSync(sock) && s.out().includes('Listening on'), 'the socket', s.out);
    expect(statSync(sock).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'run')).mode & 0o777).toBe(0o700);
    expect(s.out()).toContain(`Listening on: unix://${sock}`);
    expect((await httpReq({ socket: sock }, 'GET', 'sys/mounts', undefined, { token: 'root' })).status).toBe(200);
    expect(await stopProc(s)).toBe(0);
    expect(existsSync(sock)).toBe(false);
  });

  it('uses $XDG_RUNTIME_DIR/keyhold when set, and tightens a loosened default folder to 0700', async () => {
    const home = tmp();
    const xdg = join(home, 'xdg');
    mkdirSync(join(xdg, 'keyhold'), { recursive: true, mode: 0o755 });
    const s = spawnServer(['--dev', '--log-level', 'warn'], { HOME: home, XDG_RUNTIME_DIR: xdg });
    const sock = join(xdg, 'keyhold', 'keyhold.sock');
    await waitFor(() => s.out().includes('Listening on'), 'the listener', s.out);
    // The banner is one write: once "Listening on" is there, so is the rest.
    expect(s.out()).toContain('export KEYHOLD_TOKEN=');
    expect(statSync(sock).mode & 0o777).toBe(0o600);
    expect(statSync(join(xdg, 'keyhold')).mode & 0o777).toBe(0o700);
    // Dev mode prints a root token when none is given.
    expect(s.out()).toMatch(/Root Token: hvs\.[A-Za-z0-9]{24}/);
    expect(await stopProc(s, 'SIGINT')).toBe(0);
  });

  it('refuses to start on a socket another daemon is listening on', async () => {
    const d = await startDaemon();
    daemons.push(d);
    const s = spawnServer(['--dev', '--socket', d.socket], { KEYHOLD_HOME: tmp() });
    expect(await s.exit).toBe(1);
    expect(s.out()).toContain(`Error: another daemon is already listening on ${d.socket}`);
    expect((await d.req('GET', 'sys/mounts')).status).toBe(200);
  });

  it('serves TLS with --tls-cert/--tls-key, including LIST and the CLI with a CA file', async () => {
    const dir = tmp();
    const { cert, key } = await selfSigned(dir);
    const d = await startDaemon({ tcp: true, args: ['--tls-cert', cert, '--tls-key', key] });
    daemons.push(d);
    expect(d.tcp).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const u = new URL(d.tcp!);
    const status = await new Promise<number>((res, rej) => {
      const q = httpsRequest(
        {
          host: u.hostname,
          port: u.port,
          path: '/v1/sys/mounts',
          headers: { 'X-Vault-Token': 'root' },
          ca: [readFileSync(cert)],
        },
        (r) => {
          r.resume();
          r.on('end', () => res(r.statusCode!));
        },
      );
      q.on('error', rej);
      q.end();
    });
    expect(status).toBe(200);
    const c = await rawConnect(d.tcp!);
    try {
      await c.write(
        rawRequest('POST', '/v1/sys/policies/acl/tls1', {
          token: 'root',
          body: JSON.stringify({ policy: 'path "a" { capabilities = ["read"] }' }),
        }),
      );
      expect((await c.read()).status).toBe(204);
      await c.write(rawRequest('LIST', '/v1/sys/policies/acl', { token: 'root' }));
      expect(JSON.parse((await c.read()).body).data.keys).toContain('tls1');
    } finally {
      c.close();
    }
    const ok = await d.cli(['list', 'sys/policies/acl'], { env: { KEYHOLD_ADDR: d.tcp, KEYHOLD_CACERT: cert } });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('tls1');
    const untrusted = await d.cli(['list', 'sys/policies/acl'], { env: { KEYHOLD_ADDR: d.tcp } });
    expect(untrusted.exitCode).toBe(1);
    expect(untrusted.stderr).toMatch(/^Error: cannot reach keyhold at https:.*certificate/);
    const skip = await d.cli(['list', 'sys/policies/acl'], {
      env: { VAULT_ADDR: d.tcp, KEYHOLD_ADDR: undefined, VAULT_SKIP_VERIFY: 'true' },
    });
    expect(skip.exitCode, skip.stderr).toBe(0);
  });

  it('rejects --tls-cert without --tls-key and a malformed --listen', async () => {
    const a = spawnServer(['--dev', '--listen', '127.0.0.1:0', '--tls-cert', '/x.pem', '--no-socket'], {
      KEYHOLD_HOME: tmp(),
    });
    expect(await a.exit).toBe(1);
    expect(a.out()).toContain('Error: --tls-cert and --tls-key go together');
    const b = spawnServer(['--dev', '--listen', 'nohostport'], { KEYHOLD_HOME: tmp() });
    expect(await b.exit).toBe(1);
    expect(b.out()).toContain('Error: --listen must be host:port, got "nohostport"');
  });
});

describe('config file', () => {
  it('sets storage path, listeners, max_request_size, log_level and keychain; flags override it', async () => {
    const dir = tmp();
    const sock = join(dir, 'cfg.sock');
    const cfg = join(dir, 'keyhold.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        storage: { type: 'file', path: join(dir, 'store') },
        listeners: [
          { type: 'unix', path: sock },
          { type: 'tcp', address: '127.0.0.1:0' },
        ],
        max_request_size: 4096,
        log_level: 'error',
        keychain: 'none',
      }),
    );
    let s = spawnServer(['--config', cfg], { KEYHOLD_HOME: join(dir, 'home') });
    await waitFor(() => /Listening on: http:\/\/127\.0\.0\.1:\d+/.test(s.out()), 'the TCP listener', s.out);
    const tcp = /Listening on: (http:\/\/[^\s]+)/.exec(s.out())![1]!;
    expect(s.out()).toContain(`Listening on: unix://${sock}`);
    expect(s.out()).toContain(`Storage: file:${join(dir, 'store')}`);
    expect(existsSync(join(dir, 'store', 'keyhold.lock'))).toBe(true);
    const init = await httpReq({ socket: sock }, 'POST', 'sys/init', { keychain: true });
    expect(init.body.keychain).toBe(false); // keychain "none" from the file
    const root = init.body.root_token;
    const big = JSON.stringify({ policy: 'path "a" { capabilities = ["read"] } # ' + 'x'.repeat(5000) });
    expect(
      (await httpReq({ base: tcp }, 'PUT', 'sys/policies/acl/big', undefined, { token: root, raw: big })).status,
    ).toBe(413);
    expect(
      (
        await httpReq(
          { base: tcp },
          'PUT',
          'sys/policies/acl/small',
          { policy: 'path "a" { capabilities = ["read"] }' },
          { token: root },
        )
      ).status,
    ).toBe(204);
    expect(await stopProc(s)).toBe(0);
    expect(s.out()).not.toMatch(/"level":"info"/);

    s = spawnServer(
      ['--config', cfg, '--max-request-size', '100000', '--log-level', 'info', '--socket', join(dir, 'flag.sock')],
      { KEYHOLD_HOME: join(dir, 'home') },
    );
    await waitFor(() => s.out().includes('Listening on: http://'), 'the restart', s.out);
    expect(s.out()).toContain(`Listening on: unix://${join(dir, 'flag.sock')}`);
    expect(s.out()).not.toContain(`unix://${sock}`);
    expect(
      (await httpReq({ socket: join(dir, 'flag.sock') }, 'POST', 'sys/unseal', { key: init.body.keys[0] })).body.sealed,
    ).toBe(false);
    expect(
      (
        await httpReq({ socket: join(dir, 'flag.sock') }, 'PUT', 'sys/policies/acl/big', undefined, {
          token: root,
          raw: big,
        })
      ).status,
    ).toBe(204);
    expect(await stopProc(s)).toBe(0);
    expect(s.out()).toMatch(/"level":"info","msg":"shutting down"/);
  });

  it("applies a listener's own max_request_size (Vault's per-listener limit)", async () => {
    const dir = tmp();
    const sock = join(dir, 'l.sock');
    const cfg = join(dir, 'keyhold.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        dev: true,
        dev_root_token: 'root',
        max_request_size: 8192,
        listeners: [
          { type: 'unix', path: sock },
          { type: 'tcp', address: '127.0.0.1:0', max_request_size: 1000 },
        ],
      }),
    );
    const s = spawnServer(['--config', cfg, '--log-level', 'warn'], { KEYHOLD_HOME: join(dir, 'home') });
    await waitFor(() => /Listening on: http:\/\/127\.0\.0\.1:\d+/.test(s.out()), 'the TCP listener', s.out);
    const tcp = /Listening on: (http:\/\/[^\s]+)/.exec(s.out())![1]!;
    const body = JSON.stringify({ policy: 'path "a" { capabilities = ["read"] } # ' + 'x'.repeat(2000) });
    expect(
      (await httpReq({ base: tcp }, 'PUT', 'sys/policies/acl/p', undefined, { token: 'root', raw: body })).status,
    ).toBe(413);
    expect(
      (await httpReq({ socket: sock }, 'PUT', 'sys/policies/acl/p', undefined, { token: 'root', raw: body })).status,
    ).toBe(204);
    expect(await stopProc(s)).toBe(0);
  });

  it('refuses a bad config file with exit 1 and one line naming the file and the key', async () => {
    // Every validation rule is covered by test/unit/server/config.test.ts; this checks the process.
    const dir = tmp();
    const cfg = join(dir, 'bad.json');
    writeFileSync(cfg, '{"listners": []}');
    const s = spawnServer(['--config', cfg], { KEYHOLD_HOME: join(dir, 'home') });
    expect(await s.exit).toBe(1);
    expect(s.out()).toBe(
      `Error: config ${cfg}: unknown key "listners" (allowed: storage, listeners, max_request_size, log_level, keychain, dev, dev_root_token, reported_vault_version)\n`,
    );
  });
});

describe('graceful stop', () => {
  it('lets an in-flight request finish after SIGTERM, then flushes storage, frees the lock and removes the socket', async () => {
    const dir = tmp();
    const d = await startDaemon({ dev: false, dir, args: ['--keychain', 'none'] });
    daemons.push(d);
    const init = await d.req('POST', 'sys/init', { keychain: false }, { token: null });
    const root = init.body.root_token;
    const body = Buffer.from(JSON.stringify({ policy: 'path "inflight" { capabilities = ["read"] }' }));
    const c = await rawConnect(d.socket);
    const head = `PUT /v1/sys/policies/acl/inflight HTTP/1.1\r\nHost: k\r\nX-Vault-Token: ${root}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    await c.write(Buffer.concat([Buffer.from(head), body.subarray(0, 10)]));
    await sleep(100);
    d.proc.kill('SIGTERM');
    // New connections are refused once the daemon is stopping (poll: a loaded machine may be slow to react).
    let refused = false;
    for (let i = 0; i < 100 && !refused; i++) {
      refused = await httpReq({ socket: d.socket }, 'GET', 'sys/health').then(
        () => false,
        () => true,
      );
      if (!refused) await sleep(50);
    }
    expect(refused).toBe(true);
    // ...but the daemon waits for the request in flight.
    expect(d.proc.exitCode).toBeNull();
    await c.write(body.subarray(10));
    const r = await c.read();
    expect(r.status).toBe(204);
    const code = await new Promise<number | null>((res) =>
      d.proc.exitCode !== null ? res(d.proc.exitCode) : d.proc.once('exit', (x) => res(x)),
    );
    expect(code).toBe(0);
    daemons.splice(daemons.indexOf(d), 1);
    expect(existsSync(d.socket)).toBe(false);
    expect(existsSync(join(dir, 'data', 'keyhold.lock'))).toBe(false);

    const again = await startDaemon({ dev: false, dir, args: ['--keychain', 'none'] });
    daemons.push(again);
    await again.req('POST', 'sys/unseal', { key: init.body.keys[0] }, { token: null });
    expect((await again.req('GET', 'sys/policies/acl/inflight', undefined, { token: root })).body.data.policy).toBe(
      'path "inflight" { capabilities = ["read"] }',
    );
    expect(await again.stop()).toBe(0);
    daemons.splice(daemons.indexOf(again), 1);
  });

  it('closes idle keep-alive connections promptly on SIGINT', async () => {
    const d = await startDaemon();
    const c = await rawConnect(d.socket);
    await c.write(rawRequest('GET', '/v1/sys/health'));
    expect((await c.read()).status).toBe(200);
    const t0 = Date.now();
    d.proc.kill('SIGINT');
    const code = await new Promise<number | null>((res) => d.proc.once('exit', (x) => res(x)));
    expect(code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
    c.close();
    cleanup(d.dir);
  });
});
