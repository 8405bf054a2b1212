import { copyFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';
import {
  killAgents,
  ok,
  read,
  startAgent as runAgent,
  stopAgent,
  until,
  type RunningAgent,
} from '../support/agent-process.js';
import { type Issued, TestPki } from '../support/test-pki.js';

const FIXTURE = resolve(import.meta.dirname, '..', 'fixtures', 'agent', 'cert.hcl');
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

let d: Daemon;
let dir: string;
let pki: TestPki;
let ca: Issued;
let agentCert: Issued;
let renewed: Issued;
let intruder: Issued;
let stranger: Issued;
let otherCa: Issued;

/** A working directory holding the fixture's ca.pem, client.pem and client-key.pem. */
function workdir(client: Issued): string {
  const w = mkdtempSync(join(tmpdir(), 'kh-agentcert-'));
  copyFileSync(ca.certFile, join(w, 'ca.pem'));
  copyFileSync(client.certFile, join(w, 'client.pem'));
  copyFileSync(client.keyFile, join(w, 'client-key.pem'));
  return w;
}

function startAgent(cwd: string): RunningAgent {
  return runAgent([FIXTURE], cwd, d.tcp!);
}

/** A request through the agent's API proxy (its Unix socket), without a token of our own. */
function viaProxy(socketPath: string, path: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'GET', path: `/v1/${path}` }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kh-agentcert-pki-'));
  pki = await new TestPki(dir).init();
  ca = await pki.issue({ name: 'CN=Agents CA', ca: true });
  otherCa = await pki.issue({ name: 'CN=Other CA', ca: true });
  const server = await pki.issue({
    name: 'CN=localhost',
    issuer: ca,
    dns: ['localhost'],
    ips: ['127.0.0.1'],
    eku: ['1.3.6.1.5.5.7.3.1'],
  });
  agentCert = await pki.issue({ name: 'CN=web-agent, OU=web', issuer: ca, eku: [CLIENT_AUTH] });
  renewed = await pki.issue({ name: 'CN=web-agent, OU=web', issuer: ca, eku: [CLIENT_AUTH] });
  intruder = await pki.issue({ name: 'CN=intruder, OU=web', issuer: ca, eku: [CLIENT_AUTH] });
  stranger = await pki.issue({ name: 'CN=web-agent, OU=web', issuer: otherCa, eku: [CLIENT_AUTH] });
  const cfg = join(dir, 'server.hcl');
  writeFileSync(
    cfg,
    `listener "tcp" {
  address = "127.0.0.1:0"
  tls_cert_file = "${server.certFile}"
  tls_key_file = "${server.keyFile}"
  tls_require_and_verify_client_cert = true
  tls_client_ca_file = "${ca.certFile}"
}
`,
  );
  d = await startDaemon({ args: ['--config', cfg] });
  for (let i = 0; i < 200 && !d.tcp; i++) {
    d.tcp = /Listening on: (https:\/\/[^\s]+)/.exec(d.output())?.[1];
    if (!d.tcp) await new Promise((r) => setTimeout(r, 20));
  }
  expect(d.tcp).toBeTruthy();
  const mounts = ok(await d.req('GET', 'sys/mounts')).body.data ?? {};
  if (!mounts['secret/']) ok(await d.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }));
  ok(await d.req('POST', 'sys/auth/cert', { type: 'cert' }));
  ok(await d.req('PUT', 'sys/policies/acl/web-app', { policy: 'path "secret/data/app" { capabilities = ["read"] }' }));
  ok(
    await d.req('POST', 'auth/cert/certs/web', {
      certificate: ca.cert,
      allowed_common_names: 'web-agent',
      token_policies: 'web-app',
      token_ttl: '1h',
    }),
  );
  ok(await d.req('POST', 'secret/data/app', { data: { password: 'first' } }));
}, 60_000);

afterAll(async () => {
  killAgents();
  await d?.stop();
  if (d) cleanup(d.dir);
  if (dir) cleanup(dir);
});

describe('cert.hcl against a listener requiring client certificates', () => {
  test('logs in with the certificate, renders a KV secret, lends the token through the proxy, logs in again after revocation', async () => {
    const w = workdir(agentCert);
    const a = startAgent(w);
    try {
      const token = await until(() => read(join(w, 'token')), 'the token sink');
      const self = ok(await d.req('GET', 'auth/token/lookup-self', undefined, { token })).body.data;
      expect(self.policies).toEqual(['default', 'web-app']);
      expect(self.display_name).toBe('cert-web');
      expect(self.path).toBe('auth/cert/login');
      expect(self.meta).toMatchObject({
        cert_name: 'web',
        common_name: 'web-agent',
        serial_number: BigInt(`0x${agentCert.serial}`).toString(10),
      });

      await until(() => read(join(w, 'app.env')) === 'password=first\n', 'the rendered template');
      ok(await d.req('POST', 'secret/data/app', { data: { password: 'second' } }));
      await until(() => read(join(w, 'app.env')) === 'password=second\n', 'the re-rendered template');

      // The API proxy forwards over the same mTLS connection settings and adds the agent's token.
      const proxied = await viaProxy(join(w, 'agent.sock'), 'secret/data/app');
      expect(proxied.status).toBe(200);
      expect(proxied.body.data.data.password).toBe('second');

      // The certificate is renewed on disk (reload = true: read again at the next login), then the
      // token is revoked: the agent notices (its template gets a permission error) and logs in again.
      copyFileSync(renewed.certFile, join(w, 'client.pem'));
      copyFileSync(renewed.keyFile, join(w, 'client-key.pem'));
      ok(await d.req('POST', 'auth/token/revoke', { token }));
      const next = await until(() => {
        const t = read(join(w, 'token'));
        return t && t !== token ? t : '';
      }, 'a new token after revocation');
      const again = ok(await d.req('GET', 'auth/token/lookup-self', undefined, { token: next })).body.data;
      expect(again.meta).toMatchObject({
        common_name: 'web-agent',
        serial_number: BigInt(`0x${renewed.serial}`).toString(10),
      });
      expect(again.policies).toContain('web-app');
      ok(await d.req('POST', 'secret/data/app', { data: { password: 'third' } }));
      await until(() => read(join(w, 'app.env')) === 'password=third\n', 'a render with the new token');
      expect(a.output()).not.toContain(token);
      expect(a.output()).not.toContain(next);
    } finally {
      expect(await stopAgent(a)).toBe(0);
    }
    cleanup(w);
  }, 60_000);

  test('a client certificate from another CA: the TLS handshake is refused, a clear error, no token', async () => {
    const w = workdir(stranger);
    const a = startAgent(w);
    try {
      await until(() => /login failed \(method cert\)/.test(a.output()), 'the login error');
      // TLS 1.3: the server's refusal arrives as an alert or a bare reset after the handshake; either
      // way the agent names the certificate it presented.
      expect(a.output()).toMatch(
        /(did not accept|refused) the client certificate \.\/client\.pem \(auto_auth cert client_cert\)/,
      );
      await new Promise((r) => setTimeout(r, 1500));
      expect(existsSync(join(w, 'token'))).toBe(false);
      expect(read(join(w, 'app.env'))).toBe('');
    } finally {
      await stopAgent(a);
    }
    cleanup(w);
  }, 30_000);

  test("a certificate of the trusted CA that the role's constraints exclude: the server's reason, no token", async () => {
    const w = workdir(intruder);
    const a = startAgent(w);
    try {
      await until(() => /login failed \(method cert\)/.test(a.output()), 'the login error');
      expect(a.output()).toMatch(/no chain matching all constraints could be found for this login certificate/);
      await new Promise((r) => setTimeout(r, 1500));
      expect(existsSync(join(w, 'token'))).toBe(false);
    } finally {
      await stopAgent(a);
    }
    cleanup(w);
  }, 30_000);

  test("a server certificate the agent's ca_cert does not vouch for: a clear error, no token", async () => {
    const w = workdir(agentCert);
    copyFileSync(otherCa.certFile, join(w, 'ca.pem'));
    const a = startAgent(w);
    try {
      await until(() => /login failed \(method cert\)/.test(a.output()), 'the login error');
      expect(a.output()).toMatch(/the server's TLS certificate is not trusted \([A-Z_]+\): point ca_cert/);
      expect(existsSync(join(w, 'token'))).toBe(false);
    } finally {
      await stopAgent(a);
    }
    cleanup(w);
  }, 30_000);
});

describe('a single node and the forwarded-certificate header', () => {
  test('a client claiming a certificate in X-Keyhold-Forwarded-Client-Cert gets a 400 naming the header, no token', async () => {
    const { X509Certificate } = await import('node:crypto');
    const r = await d.req(
      'POST',
      'auth/cert/login',
      { name: 'web' },
      {
        token: null,
        headers: {
          'X-Keyhold-Forwarded-Client-Cert': new X509Certificate(agentCert.cert).raw.toString('base64'),
          'X-Keyhold-Forward-Sig': `v1:${Date.now()}:${'0'.repeat(32)}:${'ab'.repeat(32)}`,
        },
      },
    );
    expect(r.status, r.text).toBe(400);
    expect(r.body.errors[0]).toMatch(/^X-Keyhold-Forwarded-Client-Cert: this node is not part of a cluster/);
    expect(r.body.auth ?? null).toBeNull();
  });
});
