/**
 * Issue 28 on a two-node cluster (real PostgreSQL): a rate-limit quota written through one node is
 * enforced by every node (each counts its own clients, as Vault's nodes do), a CORS config reaches
 * the other node, and tuning written on one node governs KV v1 reads on the other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../support/postgres.js';
import { roleOf, startNode, until, type ClusterNode } from '../support/cluster.js';

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
