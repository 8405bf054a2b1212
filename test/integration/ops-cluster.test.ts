/**
 * Barrier key rotation in a cluster (issue 27 part 3): the active rotates and writes under the new
 * term; a standby serving reads picks the term up before it opens a record sealed with it; after a
 * failover the new active writes under the newest term too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../support/postgres.js';
import { roleOf, startNode, until, type ClusterNode } from '../support/cluster.js';

const skip = postgresUnavailable();

describe.skipIf(!!skip)('barrier key terms on a two-node PostgreSQL cluster', () => {
  let pg: TestPostgres;
  const nodes: ClusterNode[] = [];
  let root = '';
  beforeAll(async () => {
    pg = startPostgres({ fsync: false });
    for (const n of ['a', 'b'])
      nodes.push(await startNode(n, { url: pg.url, extraHcl: 'telemetry {\n  disable_hostname = true\n}\n' }));
    const init = await nodes[0]!.req('POST', 'sys/init', { keychain: false });
    root = init.body.root_token;
    expect((await nodes[1]!.req('POST', 'sys/unseal', { key: init.body.keys[0] })).body.sealed).toBe(false);
    await until(
      async () => (await Promise.all(nodes.map(roleOf))).sort().join() === 'active,standby',
      'one active, one standby',
    );
  }, 120_000);
  afterAll(async () => {
    for (const n of nodes) await n.stop();
    for (const n of nodes) n.remove();
    pg?.stop();
  });

  it('a standby opens records of a term installed after it unsealed; the next active keeps writing under it; active-only state is forwarded', {
    timeout: 90_000,
  }, async () => {
    const roles = await Promise.all(nodes.map(roleOf));
    const active = nodes[roles.indexOf('active')]!;
    const standby = nodes[roles.indexOf('standby')]!;
    expect(
      (await active.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, { token: root }))
        .status,
    ).toBe(204);
    expect((await standby.req('GET', 'sys/key-status', undefined, { token: root })).body.data.term).toBe(1);
    expect((await active.req('POST', 'sys/rotate', {}, { token: root })).status).toBe(204);
    // The change feed tells the standby at once (it also re-reads the keyring when a record names a term it lacks).
    await until(
      async () => (await standby.req('GET', 'sys/key-status', undefined, { token: root })).body.data.term === 2,
      'the standby loads term 2 from the change feed',
      10_000,
    );
    expect((await active.req('POST', 'sys/rotate', {}, { token: root })).status).toBe(204);
    const w = await active.req('POST', 'secret/data/after-rotate', { data: { v: 'term 3' } }, { token: root });
    expect(w.status).toBe(200);
    const index = w.headers['x-vault-index'] as string | undefined;
    const r = await standby.req('GET', 'secret/data/after-rotate', undefined, {
      token: root,
      headers: index ? { 'X-Vault-Index': index } : {},
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.data.v).toBe('term 3');
    expect((await standby.req('GET', 'sys/key-status', undefined, { token: root })).body.data.term).toBe(3);
    // State only the active holds is asked of it through a standby: a root generation, a snapshot.
    const started = await active.req('PUT', 'sys/generate-root/attempt', {});
    expect(started.status).toBe(200);
    expect((await standby.req('GET', 'sys/generate-root/attempt')).body).toMatchObject({
      started: true,
      nonce: started.body.nonce,
    });
    expect((await standby.req('DELETE', 'sys/generate-root/attempt')).status).toBe(204);
    expect((await active.req('GET', 'sys/generate-root/attempt')).body.started).toBe(false);
    const snap = await standby.req('GET', 'sys/storage/raft/snapshot', undefined, { token: root });
    expect(snap.status).toBe(200);
    expect(snap.text.startsWith('KHSNAP01')).toBe(true);
    // The standby's metrics count what it relayed (Vault's vault.ha.rpc.client.forward).
    const m = (await standby.req('GET', 'sys/metrics?format=prometheus', undefined, { token: root })).text;
    expect(Number(/^vault_ha_rpc_client_forward_count (\d+)$/m.exec(m)?.[1])).toBeGreaterThanOrEqual(3);
    expect(m).toMatch(/^vault_core_performance_standby 1$/m);
    // Failover: the standby takes over and writes under the newest term.
    await active.stop();
    await until(async () => (await roleOf(standby)) === 'active', 'the standby becomes active', 30_000);
    expect(
      (await standby.req('POST', 'secret/data/after-failover', { data: { v: 'x' } }, { token: root })).status,
    ).toBe(200);
    expect((await standby.req('GET', 'secret/data/after-rotate', undefined, { token: root })).body.data.data.v).toBe(
      'term 3',
    );
    expect((await standby.req('GET', 'sys/key-status', undefined, { token: root })).body.data.term).toBe(3);
    await active.start();
  });
});
