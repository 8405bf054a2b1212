/**
 * TLS certificate login through a standby (issue 30 part 2): two real nodes on one real PostgreSQL,
 * each with an HTTPS listener that asks for client certificates. A standby forwards the login to
 * the active over its own connection, so it sends the client's certificate chain along, signed with
 * the cluster's forwarding key; the active logs in with it. A client cannot do the same: a request
 * carrying the forwarded-certificate or the forwarding-signature header without a valid signature
 * is refused with a 400 naming the header, on the active and on the standby, over plain HTTP and
 * over TLS with another certificate.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Answer } from '../support/daemon.js';
import { cleanup } from '../support/daemon.js';
import { pickPort, roleOf, startNode, until, type ClusterNode } from '../support/cluster.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../support/postgres.js';
import { type Issued, TestPki } from '../support/test-pki.js';
import { tlsRequest } from '../support/tls-request.js';

const skip = postgresUnavailable();
const CERT_HEADER = 'X-Keyhold-Forwarded-Client-Cert';
const SIG_HEADER = 'X-Keyhold-Forward-Sig'; // the one forwarding signature (forward-signature.ts)

interface TlsNode {
  node: ClusterNode;
  https: string;
}

/** An HTTPS request to a node's TLS listener, with an optional client certificate and extra headers. */
function tlsReq(
  n: TlsNode,
  ca: Issued,
  method: string,
  path: string,
  body: unknown,
  opts: { client?: Issued; headers?: Record<string, string>; token?: string } = {},
): Promise<Answer> {
  return tlsRequest(n.https, ca, method, path, body, opts);
}

describe.skipIf(!!skip)('cert login on a two-node cluster', () => {
  let pg: TestPostgres;
  let dir: string;
  let ca: Issued;
  let alice: Issued;
  let stranger: Issued;
  const nodes: TlsNode[] = [];
  let root = '';

  const byRole = async (role: 'active' | 'standby') => {
    for (const n of nodes) if ((await roleOf(n.node)) === role) return n;
    throw new Error(`no ${role} node`);
  };
  /** Headers a client could forge: alice's certificate (public) with a made-up signature. */
  const forged = (sig?: string): Record<string, string> => ({
    [CERT_HEADER]: new X509Certificate(alice.cert).raw.toString('base64'),
    'X-Keyhold-Forwarded-By': 'some-node',
    ...(sig ? { [SIG_HEADER]: sig } : {}),
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kh-cluster-cert-'));
    const pki = await new TestPki(dir).init();
    ca = await pki.issue({ name: 'CN=Cluster People CA', ca: true });
    const otherCa = await pki.issue({ name: 'CN=Other CA', ca: true });
    const server = await pki.issue({
      name: 'CN=localhost',
      issuer: ca,
      dns: ['localhost'],
      ips: ['127.0.0.1'],
      eku: ['1.3.6.1.5.5.7.3.1'],
    });
    alice = await pki.issue({ name: 'CN=alice, OU=engineering', issuer: ca, eku: ['1.3.6.1.5.5.7.3.2'] });
    stranger = await pki.issue({ name: 'CN=alice, OU=engineering', issuer: otherCa, eku: ['1.3.6.1.5.5.7.3.2'] });
    pg = startPostgres();
    for (const name of ['a', 'b']) {
      const port = await pickPort();
      const node = await startNode(name, {
        url: pg.url,
        extraHcl: `listener "tcp" {
  address       = "127.0.0.1:${port}"
  tls_cert_file = "${server.certFile}"
  tls_key_file  = "${server.keyFile}"
}
`,
      });
      nodes.push({ node, https: `https://127.0.0.1:${port}` });
    }
    const init = await nodes[0]!.node.req('POST', 'sys/init', { keychain: false });
    expect(init.status, init.text).toBe(200);
    root = init.body.root_token;
    const u = await nodes[1]!.node.req('POST', 'sys/unseal', { key: init.body.keys[0] });
    expect(u.body?.sealed, u.text).toBe(false);
    await until(async () => (await Promise.all(nodes.map((n) => roleOf(n.node)))).includes('standby'), 'a standby');
    const a = (await byRole('active')).node;
    expect((await a.req('POST', 'sys/auth/cert', { type: 'cert' }, { token: root })).status).toBe(204);
    expect(
      (
        await a.req(
          'POST',
          'sys/policy/eng',
          { policy: 'path "secret/*" { capabilities = ["read"] }' },
          { token: root },
        )
      ).status,
    ).toBe(204);
    expect(
      (
        await a.req(
          'POST',
          'auth/cert/certs/people',
          { certificate: ca.cert, policies: 'eng', allowed_organizational_units: 'engineering' },
          { token: root },
        )
      ).status,
    ).toBe(204);
  }, 120_000);

  afterAll(async () => {
    for (const n of nodes) await n.node.stop();
    for (const n of nodes) n.node.remove();
    pg?.stop();
    if (dir) cleanup(dir);
  });

  it("logs in through the standby with the client's certificate; the token is the active's and carries the certificate's metadata", async () => {
    const standby = await byRole('standby');
    const active = await byRole('active');
    const r = await tlsReq(standby, ca, 'POST', 'auth/cert/login', { name: 'people' }, { client: alice });
    expect(r.status, r.text).toBe(200);
    expect(r.body.auth.policies).toEqual(['default', 'eng']);
    expect(r.body.auth.metadata).toMatchObject({
      cert_name: 'people',
      common_name: 'alice',
      serial_number: BigInt(`0x${alice.serial}`).toString(10),
    });
    const token = r.body.auth.client_token as string;
    for (const n of [active, standby]) {
      const self = await n.node.req('GET', 'auth/token/lookup-self', undefined, { token });
      expect(self.status, `${n.node.name}: ${self.text}`).toBe(200);
      expect(self.body.data).toMatchObject({ display_name: 'cert-people', path: 'auth/cert/login' });
    }
    // The same login through the active, for comparison.
    const direct = await tlsReq(active, ca, 'POST', 'auth/cert/login', { name: 'people' }, { client: alice });
    expect(direct.status, direct.text).toBe(200);
    expect(direct.body.auth.metadata.common_name).toBe('alice');
  });

  it('through the standby: no certificate, or one from another CA, is refused as on a single node', async () => {
    const standby = await byRole('standby');
    for (const client of [undefined, stranger]) {
      const r = await tlsReq(standby, ca, 'POST', 'auth/cert/login', { name: 'people' }, { client });
      expect(r.status, r.text).toBe(400);
      expect(r.body.errors).toEqual(['invalid certificate or no client certificate supplied']);
    }
  });

  it('a client cannot inject a certificate: the headers without a valid signature are refused, naming the header', async () => {
    const active = await byRole('active');
    const standby = await byRole('standby');
    const attempts: Array<[string, () => Promise<Answer>]> = [];
    for (const n of [active, standby]) {
      for (const sig of [undefined, `v1:${Date.now()}:${'0'.repeat(32)}:${'ab'.repeat(32)}`, 'garbage']) {
        attempts.push([
          `${n.node.name} http sig=${sig}`,
          () => n.node.tcpReq('POST', 'auth/cert/login', { name: 'people' }, { headers: forged(sig) }),
        ]);
        attempts.push([
          `${n.node.name} tls+stranger sig=${sig}`,
          () =>
            tlsReq(n, ca, 'POST', 'auth/cert/login', { name: 'people' }, { client: stranger, headers: forged(sig) }),
        ]);
      }
      // The signature header alone is refused too.
      attempts.push([
        `${n.node.name} sig only`,
        () =>
          n.node.tcpReq(
            'POST',
            'auth/cert/login',
            { name: 'people' },
            { headers: { [SIG_HEADER]: `v1:1:${'0'.repeat(32)}:${'ab'.repeat(32)}` } },
          ),
      ]);
    }
    for (const [what, send] of attempts) {
      const r = await send();
      expect(r.status, `${what}: ${r.text}`).toBe(400);
      expect(r.body.errors[0], what).toMatch(/^X-Keyhold-(Forwarded-Client-Cert|Forward-Sig): /);
      expect(r.body.auth ?? null, what).toBeNull();
    }
    // Also on a request that is forwarded (a write through the standby): still refused.
    const w = await standby.node.tcpReq('POST', 'sys/policy/x', { policy: '' }, { token: root, headers: forged() });
    expect(w.status, w.text).toBe(400);
    expect(w.body.errors[0]).toMatch(/^X-Keyhold-Forwarded-Client-Cert/);
  });
});
