/**
 * Issue 28 on a two-node cluster (real PostgreSQL): a rate-limit quota written through one node is
 * enforced by every node (each counts its own clients, as Vault's nodes do), a write a standby
 * forwards is counted once for its real client (the active does not count it again under the
 * standby's address, and a client cannot forge the standby's proof), a CORS config reaches the other
 * node, and tuning written on one node governs KV v1 reads on the other.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../support/postgres.js';
import { roleOf, startNode, until, type ClusterNode } from '../support/cluster.js';

/** One request over TCP from a chosen loopback source address (Linux accepts any 127/8 address). */
function fromAddress(
  n: ClusterNode,
  localAddress: string,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const r = request(
      {
        host: '127.0.0.1',
        port: n.port,
        localAddress,
        agent: false,
        method,
        path: `/v1/${path}`,
        headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(payload.length) },
      },
      (resp) => {
        const chunks: Buffer[] = [];
        resp.on('data', (c: Buffer) => chunks.push(c));
        resp.on('error', reject);
        resp.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: resp.statusCode ?? 0, headers: resp.headers, body: text ? JSON.parse(text) : null });
        });
      },
    );
    r.on('error', reject);
    r.end(payload);
  });
}

const skip = postgresUnavailable();

describe.skipIf(!!skip)('quotas, CORS and tuning on a two-node cluster', () => {
  let pg: TestPostgres;
  const nodes: ClusterNode[] = [];
  let root = '';
  let active: ClusterNode;
  let standby: ClusterNode;

  beforeAll(async () => {
    pg = startPostgres();
    for (const n of ['a', 'b']) nodes.push(await startNode(n, { url: pg.url }));
    const init = await nodes[0]!.req('POST', 'sys/init', { keychain: false });
    expect(init.status).toBe(200);
    root = init.body.root_token;
    const u = await nodes[1]!.req('POST', 'sys/unseal', { key: init.body.keys[0] });
    expect(u.body?.sealed, u.text).toBe(false);
    await until(
      async () => (await Promise.all(nodes.map(roleOf))).sort().join() === 'active,standby',
      'one active, one standby',
    );
    active = (await roleOf(nodes[0]!)) === 'active' ? nodes[0]! : nodes[1]!;
    standby = nodes.find((n) => n !== active)!;
    expect((await active.req('POST', 'sys/mounts/transit', { type: 'transit' }, { token: root })).status).toBe(204);
    expect((await active.req('POST', 'transit/keys/k', {}, { token: root })).status).toBe(200);
    await until(
      async () => (await standby.req('GET', 'transit/keys/k', undefined, { token: root })).status === 200,
      'the standby sees the key',
    );
  }, 120_000);

  afterAll(async () => {
    for (const n of nodes) await n.stop();
    for (const n of nodes) n.remove();
    pg?.stop();
  });

  const pt = Buffer.from('x').toString('base64');
  const encrypt = (n: ClusterNode) => n.tcpReq('POST', 'transit/encrypt/k', { plaintext: pt }, { token: root });

  it('a quota written through the standby is enforced by both nodes', async () => {
    const w = await standby.req(
      'POST',
      'sys/quotas/rate-limit/cap',
      { path: 'transit/encrypt/k', rate: 3, interval: '1m' },
      { token: root },
    );
    expect(w.status, w.text).toBe(204);
    for (const n of [active, standby]) {
      await until(
        async () => (await n.req('GET', 'sys/quotas/rate-limit/cap', undefined, { token: root })).status === 200,
        `${n.name} sees the quota`,
      );
    }
    // The standby serves encrypt itself, so its refusals are its own.
    await until(async () => (await encrypt(standby)).status === 429, 'the standby refuses over the limit', 15_000, 10);
    await until(async () => (await encrypt(active)).status === 429, 'the active refuses over the limit', 15_000, 10);
    const r = await encrypt(standby);
    expect(r.status).toBe(429);
    expect(r.body.errors).toEqual(['request path "transit/encrypt/k": rate limit quota exceeded']);
    // Deleted through the active: both nodes let the requests through again.
    expect((await active.req('DELETE', 'sys/quotas/rate-limit/cap', undefined, { token: root })).status).toBe(204);
    for (const n of [active, standby])
      await until(async () => (await encrypt(n)).status === 200, `${n.name} serves again`);
  });

  describe('a write a standby forwards is counted once, for its real client', () => {
    const RATE = 4;
    const write = (n: ClusterNode, from: string, headers: Record<string, string> = {}) =>
      fromAddress(n, from, 'PUT', 'kvq/s', { v: from }, { 'X-Vault-Token': root, ...headers });
    /** Statuses of RATE + 1 writes from one address, one after another. */
    const burst = async (n: ClusterNode, from: string, headers: Record<string, string> = {}) => {
      const out: Array<{ status: number; remaining: unknown; error?: unknown }> = [];
      for (let i = 0; i <= RATE; i++) {
        const r = await write(n, from, headers);
        out.push({ status: r.status, remaining: r.headers['x-ratelimit-remaining'], error: r.body?.errors?.[0] });
      }
      return out;
    };
    const expected = () => [
      ...Array.from({ length: RATE }, (_, i) => ({ status: 204, remaining: String(RATE - 1 - i), error: undefined })),
      { status: 429, remaining: '0', error: 'request path "kvq/s": rate limit quota exceeded' },
    ];

    beforeAll(async () => {
      expect(
        (await active.req('POST', 'sys/mounts/kvq', { type: 'kv', options: { version: '1' } }, { token: root })).status,
      ).toBe(204);
      // A long interval: the fixed window does not start over during the test.
      const q = { path: 'kvq/', rate: RATE, interval: '24h' };
      expect((await active.req('POST', 'sys/quotas/rate-limit/fwd', q, { token: root })).status).toBe(204);
      const c = { enable_rate_limit_response_headers: true };
      expect((await active.req('POST', 'sys/quotas/config', c, { token: root })).status).toBe(204);
      await until(async () => {
        const mounts = await standby.req('GET', 'sys/mounts', undefined, { token: root });
        const quota = await standby.req('GET', 'sys/quotas/rate-limit/fwd', undefined, { token: root });
        const config = await standby.req('GET', 'sys/quotas/config', undefined, { token: root });
        return (
          mounts.body?.data?.['kvq/'] !== undefined &&
          quota.status === 200 &&
          config.body?.data?.enable_rate_limit_response_headers === true
        );
      }, 'the standby sees the mount, the quota and the config');
    });

    afterAll(async () => {
      await active.req('DELETE', 'sys/quotas/rate-limit/fwd', undefined, { token: root });
      await active.req('POST', 'sys/quotas/config', { enable_rate_limit_response_headers: false }, { token: root });
    });

    it('a client writing through the standby gets exactly `rate` writes, then 429', async () => {
      expect(await burst(standby, '127.0.0.2')).toEqual(expected());
    });

    it('another client behind the same standby has its own full quota', async () => {
      expect(await burst(standby, '127.0.0.3')).toEqual(expected());
    });

    it('the forwarded writes used up nothing on the active (not even the standby address)', async () => {
      // The standby forwards from 127.0.0.1: a client of the active on that address still has all of its quota.
      expect(await burst(active, '127.0.0.1')).toEqual(expected());
    });

    it('a forged forwarding header from a client does not bypass the quota', async () => {
      const forged = {
        'X-Keyhold-Forwarded-By': 'standby', // any value: only the signature, which needs the cluster's key, is trusted
        'X-Keyhold-Forward-Proof': `v1.${Date.now()}.${'ab'.repeat(32)}`, // the former proof header: means nothing
      };
      // Straight to the active, as if a standby had sent it: counted as any request.
      expect(await burst(active, '127.0.0.4', forged)).toEqual(expected());
      // Through the standby (a forwarded-by header there is refused as a loop, 503): the standby
      // counts the client once, itself, and signs what it forwards with its own signature.
      const proofOnly = { 'X-Keyhold-Forward-Proof': forged['X-Keyhold-Forward-Proof'] };
      expect(await burst(standby, '127.0.0.5', proofOnly)).toEqual(expected());
    });

    it('a forged forwarding signature from a client is refused with a 400 naming the header, and uses no quota', async () => {
      const sig = `v1:${Date.now()}:${'0'.repeat(32)}:${'ab'.repeat(32)}`;
      const attempts: Array<[ClusterNode, string, Record<string, string>]> = [
        [active, '127.0.0.6', { 'X-Keyhold-Forwarded-By': 'standby', 'X-Keyhold-Forward-Sig': sig }],
        [standby, '127.0.0.7', { 'X-Keyhold-Forward-Sig': sig }],
      ];
      for (const [n, from, headers] of attempts) {
        for (let i = 0; i <= RATE; i++) {
          const r = await write(n, from, headers);
          expect(r.status, `${n.name}: ${r.text}`).toBe(400);
          expect(r.body.errors[0]).toMatch(/^X-Keyhold-Forward-Sig: /);
        }
        // Refused before the quota step: the client still has all of its quota on that node.
        expect(await burst(n, from)).toEqual(expected());
      }
    });
  });

  it("a forwarded request is judged by its client's address (token_bound_cidrs), not the standby's", async () => {
    const must = async (r: Promise<{ status: number; text: string }>, status: number) => {
      const a = await r;
      expect(a.status, a.text).toBe(status);
    };
    await must(active.req('POST', 'sys/mounts/kvb', { type: 'kv', options: { version: '1' } }, { token: root }), 204);
    const policy = 'path "kvb/*" { capabilities = ["create", "update", "read"] }';
    await must(active.req('PUT', 'sys/policies/acl/kvb-w', { policy }, { token: root }), 204);
    const role = { allowed_policies: 'kvb-w', token_bound_cidrs: '127.0.0.2/32' };
    await must(active.req('POST', 'auth/token/roles/bound', role, { token: root }), 204);
    const created = await active.req('POST', 'auth/token/create/bound', { policies: ['kvb-w'] }, { token: root });
    expect(created.status, created.text).toBe(200);
    const t = created.body.auth.client_token as string;
    await until(
      async () => (await standby.req('GET', 'sys/mounts', undefined, { token: root })).body?.data?.['kvb/'],
      'the standby sees kvb/',
    );
    const put = (n: ClusterNode, from: string) =>
      fromAddress(n, from, 'PUT', 'kvb/s', { v: from }, { 'X-Vault-Token': t });
    // Through the standby from the bound address: the active sees 127.0.0.2 (signed), not the standby.
    expect((await put(standby, '127.0.0.2')).status).toBe(204);
    expect((await put(standby, '127.0.0.3')).status).toBe(403);
    expect((await put(active, '127.0.0.2')).status).toBe(204);
    expect((await put(active, '127.0.0.1')).status).toBe(403);
  });

  it('a CORS config written on the active governs the standby', async () => {
    expect(
      (await active.req('POST', 'sys/config/cors', { allowed_origins: ['https://app.example.com'] }, { token: root }))
        .status,
    ).toBe(204);
    await until(
      async () =>
        (await standby.tcpReq('GET', 'sys/health', undefined, { headers: { Origin: 'https://evil.example.net' } }))
          .status === 403,
      'the standby refuses an unlisted origin',
    );
    const ok = await standby.tcpReq('GET', 'sys/health', undefined, { headers: { Origin: 'https://app.example.com' } });
    expect(ok.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect((await active.req('DELETE', 'sys/config/cors', undefined, { token: root })).status).toBe(204);
  });

  it('a tune written on one node governs KV v1 reads served by the other', async () => {
    expect(
      (await active.req('POST', 'sys/mounts/kv1', { type: 'kv', options: { version: '1' } }, { token: root })).status,
    ).toBe(204);
    expect((await active.req('POST', 'kv1/s', { a: 'b' }, { token: root })).status).toBe(204);
    await until(
      async () => (await standby.req('GET', 'kv1/s', undefined, { token: root })).status === 200,
      'the standby sees the mount',
    );
    expect(
      (await standby.req('POST', 'sys/mounts/kv1/tune', { default_lease_ttl: '1h' }, { token: root })).status,
    ).toBe(204);
    await until(
      async () => (await standby.req('GET', 'kv1/s', undefined, { token: root })).body?.lease_duration === 3600,
      'the standby reads the tuned lease',
    );
    expect((await active.req('GET', 'kv1/s', undefined, { token: root })).body.lease_duration).toBe(3600);
  });

  it('a mount moved on the active is served at its new path by the standby', async () => {
    expect((await active.req('POST', 'sys/remount', { from: 'kv1', to: 'kv1-moved' }, { token: root })).status).toBe(
      200,
    );
    await until(
      async () => (await standby.req('GET', 'kv1-moved/s', undefined, { token: root })).status === 200,
      'the standby serves the new path',
    );
    expect((await standby.req('GET', 'kv1/s', undefined, { token: root })).status).toBe(404);
  });
});
