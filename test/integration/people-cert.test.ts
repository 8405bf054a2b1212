/**
 * TLS certificate login (issue 29 part 1) on a real daemon with TLS listeners: the login reads the
 * client certificate of its own connection. Certificates come from an independent implementation
 * (test/support/test-pki.ts). Trusted CA and trusted leaf, intermediates sent by the client,
 * constraints (CN, DNS/email/URI SANs, OU, required extensions), expired, wrong-CA and CRL-revoked
 * certificates, a listener that requires and verifies client certificates, and the CLI's
 * `login -method=cert` with -client-cert/-client-key and VAULT_CLIENT_CERT/VAULT_CLIENT_KEY.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Answer, type Daemon } from '../support/daemon.js';
import { type Issued, TestPki } from '../support/test-pki.js';
import { tlsRequest } from '../support/tls-request.js';

let d: Daemon;
let strict: Daemon;
let dir: string;
let pki: TestPki;
let ca: Issued;
let inter: Issued;
let otherCa: Issued;
let server: Issued;
let alice: Issued;
let bob: Issued;
let viaInter: Issued;
let expired: Issued;
let stranger: Issued;
let serverOnly: Issued;
let pinned: Issued;

const base = (x: Daemon) => x.tcp!;

/** An HTTPS request with an optional client certificate (the chain may include intermediates). */
function tlsReq(
  x: Daemon,
  method: string,
  path: string,
  body: unknown,
  client?: { cert: string; key: string },
  token?: string,
): Promise<Answer> {
  return tlsRequest(base(x), ca, method, path, body, { client, token });
}

const login = (client?: { cert: string; key: string }, name?: string, x: Daemon = d) =>
  tlsReq(x, 'POST', 'auth/cert/login', name ? { name } : {}, client);

async function must(method: string, path: string, body?: unknown, status = 204) {
  const r = await d.req(method, path, body);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}

function configFile(name: string, extra: string): string {
  const f = join(dir, name);
  writeFileSync(
    f,
    `listener "tcp" {\n  address = "127.0.0.1:0"\n  tls_cert_file = "${server.certFile}"\n  tls_key_file = "${server.keyFile}"\n${extra}}\n`,
  );
  return f;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keyhold-cert-'));
  pki = await new TestPki(dir).init();
  ca = await pki.issue({ name: 'CN=People CA', ca: true });
  inter = await pki.issue({ name: 'CN=People Intermediate', ca: true, issuer: ca });
  otherCa = await pki.issue({ name: 'CN=Other CA', ca: true });
  server = await pki.issue({
    name: 'CN=localhost',
    issuer: ca,
    dns: ['localhost'],
    ips: ['127.0.0.1'],
    eku: ['1.3.6.1.5.5.7.3.1'],
  });
  alice = await pki.issue({
    name: 'CN=alice, OU=engineering, O=Example',
    issuer: ca,
    emails: ['alice@example.com'],
    dns: ['alice.example.com'],
    uris: ['spiffe://example.com/alice'],
    eku: ['1.3.6.1.5.5.7.3.2'],
    extensions: { '1.2.3.4.5': 'team-blue' },
  });
  bob = await pki.issue({ name: 'CN=bob, OU=sales', issuer: ca });
  viaInter = await pki.issue({ name: 'CN=carol', issuer: inter });
  expired = await pki.issue({
    name: 'CN=old-alice',
    issuer: ca,
    notBefore: new Date(Date.now() - 10 * 86_400_000),
    notAfter: new Date(Date.now() - 86_400_000),
  });
  stranger = await pki.issue({ name: 'CN=mallory', issuer: otherCa });
  serverOnly = await pki.issue({ name: 'CN=srv-only', issuer: ca, eku: ['1.3.6.1.5.5.7.3.1'] });
  pinned = await pki.issue({ name: 'CN=pinned-device' });
  d = await startDaemon({ tcp: false, args: ['--config', configFile('tls.hcl', '')], env: {} });
  d.tcp = /Listening on: (https:\/\/[^\s]+)/.exec(d.output())?.[1];
  for (let i = 0; i < 100 && !d.tcp; i++) {
    await new Promise((r) => setTimeout(r, 20));
    d.tcp = /Listening on: (https:\/\/[^\s]+)/.exec(d.output())?.[1];
  }
  expect(d.tcp).toBeTruthy();
  await must('POST', 'sys/auth/cert', { type: 'cert' });
  await must('POST', 'sys/policy/eng', { policy: 'path "secret/*" { capabilities = ["read"] }' });
}, 60_000);
afterAll(async () => {
  await d?.stop();
  await strict?.stop();
  if (d) cleanup(d.dir);
  if (strict) cleanup(strict.dir);
  if (dir) cleanup(dir);
});

describe('cert roles', () => {
  it('creates a CA role as hvac does, reads it back with display_name = name, lists it', async () => {
    await must('POST', 'auth/cert/certs/people', {
      certificate: ca.cert,
      policies: 'eng',
      allowed_organizational_units: 'engineering',
    });
    const r = await must('GET', 'auth/cert/certs/people', undefined, 200);
    expect(r.body.data).toMatchObject({
      display_name: 'people',
      token_policies: ['eng'],
      allowed_organizational_units: ['engineering'],
      ocsp_enabled: false,
    });
    expect(r.body.data.certificate).toContain('BEGIN CERTIFICATE');
    expect((await must('LIST', 'auth/cert/certs', undefined, 200)).body.data.keys).toEqual(['people']);
  });

  it('refuses OCSP with 400 "not supported", a missing or unparsable certificate with 400 naming the field', async () => {
    const o = await d.req('POST', 'auth/cert/certs/x', { certificate: ca.cert, ocsp_enabled: true });
    expect(o.status).toBe(400);
    expect(o.body.errors[0]).toMatch(/^ocsp_enabled: OCSP is not supported/);
    expect((await d.req('POST', 'auth/cert/certs/x', { policies: 'a' })).body.errors).toEqual([
      'must specify certificate',
    ]);
    const bad = await d.req('POST', 'auth/cert/certs/x', { certificate: 'not a pem' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^certificate: /);
  });

  it('writes and reads config (hvac configure_tls_certificate: 204)', async () => {
    await must('POST', 'auth/cert/config', { disable_binding: false });
    expect((await must('GET', 'auth/cert/config', undefined, 200)).body.data).toMatchObject({
      disable_binding: false,
      ocsp_cache_size: 100,
    });
  });
});

describe('cert login', () => {
  it("logs in with a certificate issued by the role's CA: Vault's metadata, display name, alias = CN, policies", async () => {
    const r = await login(alice);
    expect(r.status, r.text).toBe(200);
    expect(r.body.auth.policies).toEqual(['default', 'eng']);
    expect(r.body.auth.metadata).toMatchObject({
      cert_name: 'people',
      common_name: 'alice',
      serial_number: BigInt(`0x${alice.serial}`).toString(10),
    });
    expect(r.body.auth.metadata.subject_key_id).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2})+$/);
    const self = await d.req('GET', 'auth/token/lookup-self', undefined, { token: r.body.auth.client_token });
    expect(self.body.data).toMatchObject({ display_name: 'cert-people', path: 'auth/cert/login' });
    const entity = await d.req('GET', `identity/entity/id/${r.body.auth.entity_id}`);
    if (entity.status === 200) expect(entity.body.data.aliases[0].name).toBe('alice');
  });

  it("refuses a connection without a client certificate, and a certificate the role's constraints exclude", async () => {
    const none = await login(undefined);
    expect(none.status).toBe(400);
    expect(none.body.errors).toEqual(['invalid certificate or no client certificate supplied']);
    const sales = await login(bob);
    expect(sales.status).toBe(400);
    expect(sales.body.errors).toEqual(['no chain matching all constraints could be found for this login certificate']);
  });

  it('refuses an expired certificate, one from another CA, and one not meant for client authentication', async () => {
    for (const c of [expired, stranger, serverOnly]) {
      const r = await login(c);
      expect(r.status, c.name).toBe(400);
      expect(r.body.errors).toEqual(['invalid certificate or no client certificate supplied']);
    }
  });

  it("follows intermediates the client sends to the role's root", async () => {
    await must('POST', 'auth/cert/certs/interns', { certificate: ca.cert, allowed_common_names: 'carol' });
    const r = await login({ cert: `${viaInter.cert}\n${inter.cert}\n`, key: viaInter.key });
    expect(r.status, r.text).toBe(200);
    expect(r.body.auth.metadata.cert_name).toBe('interns');
    // Without the intermediate there is no path.
    expect((await login({ cert: viaInter.cert, key: viaInter.key })).status).toBe(400);
  });

  it('matches CN, DNS, email and URI SANs with globs, and required extensions', async () => {
    await must('POST', 'auth/cert/certs/sans', {
      certificate: ca.cert,
      allowed_common_names: 'ali*',
      allowed_dns_sans: '*.example.com',
      allowed_email_sans: '*@example.com',
      allowed_uri_sans: 'spiffe://example.com/*',
      required_extensions: '1.2.3.4.5:team-*',
    });
    const r = await login(alice, 'sans');
    expect(r.status, r.text).toBe(200);
    await must('POST', 'auth/cert/certs/sans', { required_extensions: '1.2.3.4.5:team-red' });
    expect((await login(alice, 'sans')).body.errors).toEqual([
      'no chain matching all constraints could be found for this login certificate',
    ]);
  });

  it('trusts a pinned non-CA certificate only as itself', async () => {
    await must('POST', 'auth/cert/certs/device', { certificate: pinned.cert });
    expect((await login(pinned, 'device')).status).toBe(200);
    expect((await login(alice, 'device')).status).toBe(400);
  });

  it('refuses a certificate revoked by a CRL, and takes it back when the CRL is deleted', async () => {
    await must('POST', 'auth/cert/crls/people-crl', { crl: await pki.crl(ca, [alice.serial]) });
    const read = await must('GET', 'auth/cert/crls/people-crl', undefined, 200);
    expect(Object.keys(read.body.data.serials)).toEqual([BigInt(`0x${alice.serial}`).toString(10)]);
    expect((await login(alice, 'people')).status).toBe(400);
    expect((await login(bob, 'sans')).status).toBe(400); // constraints, unrelated to the CRL
    await must('DELETE', 'auth/cert/crls/people-crl');
    expect((await login(alice, 'people')).status).toBe(200);
    const bad = await d.req('POST', 'auth/cert/crls/x', { crl: 'garbage' });
    expect(bad.status).toBe(400);
  });

  it('an unknown role name is a 400 (hvac expects InvalidRequest)', async () => {
    expect((await login(alice, 'nosuchrole')).status).toBe(400);
  });
});

describe('listener with tls_require_and_verify_client_cert', () => {
  it('refuses the handshake without a certificate or with one from another CA, and logs in with a good one', async () => {
    strict = await startDaemon({
      args: [
        '--config',
        configFile(
          'strict.hcl',
          `  tls_require_and_verify_client_cert = true\n  tls_client_ca_file = "${ca.certFile}"\n`,
        ),
      ],
    });
    for (let i = 0; i < 100 && !strict.tcp; i++) {
      strict.tcp = /Listening on: (https:\/\/[^\s]+)/.exec(strict.output())?.[1];
      if (!strict.tcp) await new Promise((r) => setTimeout(r, 20));
    }
    await expect(tlsReq(strict, 'GET', 'sys/health', undefined)).rejects.toThrow();
    await expect(tlsReq(strict, 'GET', 'sys/health', undefined, stranger)).rejects.toThrow();
    expect((await tlsReq(strict, 'GET', 'sys/health', undefined, bob)).status).toBe(200);
    expect((await strict.req('POST', 'sys/auth/cert', { type: 'cert' })).status).toBe(204);
    expect((await strict.req('POST', 'auth/cert/certs/all', { certificate: ca.cert })).status).toBe(204);
    expect((await login(bob, undefined, strict)).status).toBe(200);
  });

  it('refuses tls_require_and_verify_client_cert without tls_client_ca_file at start, naming the key', async () => {
    const bad = await startDaemon({
      args: ['--config', configFile('bad.hcl', '  tls_require_and_verify_client_cert = true\n')],
      wait: false,
    });
    const code = await new Promise<number | null>((r) => bad.proc.once('exit', (c) => r(c)));
    expect(code).not.toBe(0);
    expect(bad.output()).toMatch(/tls_require_and_verify_client_cert needs tls_client_ca_file/);
    cleanup(bad.dir);
  });
});

describe('keyhold login -method=cert', () => {
  it('logs in with -client-cert/-client-key, and with VAULT_CLIENT_CERT/VAULT_CLIENT_KEY', async () => {
    const env = { KEYHOLD_ADDR: base(d), VAULT_CACERT: ca.certFile };
    const a = await d.cli(
      [
        'login',
        '-method=cert',
        `-client-cert=${alice.certFile}`,
        `-client-key=${alice.keyFile}`,
        'name=people',
        '-no-store',
        '-format=json',
      ],
      { env, token: null },
    );
    expect(a.exitCode, a.stderr).toBe(0);
    // `-format=json` prints Vault's whole envelope (issue 34 item 1): the policies are in its auth block.
    expect(JSON.parse(a.stdout).auth.token_policies).toContain('eng');
    const b = await d.cli(['login', '-method=cert', 'name=people'], {
      env: { ...env, VAULT_CLIENT_CERT: alice.certFile, VAULT_CLIENT_KEY: alice.keyFile },
      token: null,
    });
    expect(b.exitCode, b.stderr).toBe(0);
    expect(b.stderr).toMatch(/Success! You are now authenticated/);
    const none = await d.cli(['login', '-method=cert'], { env, token: null });
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/invalid certificate or no client certificate supplied/);
  });
});
