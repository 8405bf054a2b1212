/**
 * Issue 33 on a two-node cluster over a real PostgreSQL: single use holds across nodes (20
 * simultaneous unwraps or limited-use requests split between the active and the standby: exactly one
 * or exactly num_uses succeed), and a parent's expiry revokes its child on every node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../support/postgres.js';
import { roleOf, startNode, until, type ClusterNode } from '../support/cluster.js';

const skip = postgresUnavailable();

function tally(statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}

describe.skipIf(!!skip)('token lifecycle on a two-node PostgreSQL cluster', () => {
  let pg: TestPostgres;
  const nodes: ClusterNode[] = [];
  let root = '';

  beforeAll(async () => {
    pg = startPostgres();
    for (const n of ['a', 'b']) nodes.push(await startNode(n, { url: pg.url }));
    const init = await nodes[0]!.req('POST', 'sys/init', { keychain: false });
    expect(init.status, init.text).toBe(200);
    root = init.body.root_token;
    const u = await nodes[1]!.req('POST', 'sys/unseal', { key: init.body.keys[0] });
    expect(u.body?.sealed, u.text).toBe(false);
    await until(
      async () => (await Promise.all(nodes.map(roleOf))).sort().join() === 'active,standby',
      'one active, one standby',
    );
    const a = nodes[0]!;
    expect(
      (await a.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '1' } }, { token: root })).status,
    ).toBe(204);
    expect((await a.req('POST', 'secret/x', { v: '1' }, { token: root })).status).toBe(204);
    expect(
      (
        await a.req(
          'POST',
          'sys/policies/acl/p1',
          {
            policy:
              'path "secret/*" { capabilities = ["read"] }\npath "auth/token/create" { capabilities = ["update"] }',
          },
          { token: root },
        )
      ).status,
    ).toBe(204);
  }, 120_000);

  afterAll(async () => {
    for (const n of nodes) await n.stop();
    for (const n of nodes) n.remove();
    pg?.stop();
  });

  it('a wrapping token unwraps exactly once among 20 simultaneous unwraps on both nodes (8 tokens)', async () => {
    for (let i = 0; i < 8; i++) {
      const w = await nodes[i % 2]!.req(
        'POST',
        'sys/wrapping/wrap',
        { secret: `s${i}` },
        { token: root, headers: { 'X-Vault-Wrap-TTL': '5m' } },
      );
      expect(w.status, w.text).toBe(200);
      const wt = w.body.wrap_info.token as string;
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, k) =>
          nodes[k % 2]!.req('POST', 'sys/wrapping/unwrap', k % 4 < 2 ? {} : { token: wt }, {
            token: k % 4 < 2 ? wt : root,
          }),
        ),
      );
      expect(tally(answers.map((a) => a.status)), `token ${i}`).toEqual({ 200: 1, 400: 19 });
      expect(answers.find((a) => a.status === 200)!.body.data).toEqual({ secret: `s${i}` });
    }
  });

  it('a num_uses token serves exactly num_uses of 20 simultaneous requests on both nodes (8 tokens)', async () => {
    for (let i = 0; i < 8; i++) {
      const uses = i < 4 ? 1 : 3;
      const c = await nodes[0]!.req('POST', 'auth/token/create', { policies: ['p1'], num_uses: uses }, { token: root });
      expect(c.status, c.text).toBe(200);
      const t = c.body.auth.client_token as string;
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, k) => nodes[k % 2]!.req('GET', 'secret/x', undefined, { token: t })),
      );
      expect(tally(answers.map((a) => a.status)), `token ${i}`).toEqual({ 200: uses, 403: 20 - uses });
    }
  });

  it("a parent's expiry revokes its child on every node", async () => {
    const parent = await nodes[0]!.req('POST', 'auth/token/create', { policies: ['p1'], ttl: '3s' }, { token: root });
    expect(parent.status, parent.text).toBe(200);
    const child = await nodes[0]!.req(
      'POST',
      'auth/token/create',
      { policies: ['p1'], ttl: '1h' },
      { token: parent.body.auth.client_token },
    );
    expect(child.status, child.text).toBe(200);
    const ct = child.body.auth.client_token as string;
    for (const n of nodes) expect((await n.req('GET', 'secret/x', undefined, { token: ct })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 3500));
    for (const n of nodes)
      await until(
        async () => (await n.req('GET', 'secret/x', undefined, { token: ct })).status === 403,
        `child refused on ${n.name}`,
        3000,
      );
  });
});
