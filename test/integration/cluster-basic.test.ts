/**
 * Three real nodes on one real PostgreSQL: init on one, unseal all with the recovery key; exactly one
 * active; writes through each node read back through each node with X-Vault-Index; standbys serve
 * transit crypto and see a rotation within 100 ms; status endpoints; only ciphertext in the database.
 */
import { createServer } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/daemon.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../support/postgres.js';
import { roleOf, startNode, until, type ClusterNode } from '../support/cluster.js';

const skip = postgresUnavailable();

describe.skipIf(!!skip)('a three-node cluster on PostgreSQL', () => {
  let pg: TestPostgres;
  const nodes: ClusterNode[] = [];
  let root = '';
  let recovery = '';

  beforeAll(async () => {
    pg = startPostgres();
    for (const n of ['a', 'b', 'c']) nodes.push(await startNode(n, { url: pg.url }));
    const init = await nodes[0]!.req('POST', 'sys/init', { keychain: false });
    expect(init.status).toBe(200);
    root = init.body.root_token;
    recovery = init.body.keys[0];
    for (const n of nodes.slice(1)) {
      const u = await n.req('POST', 'sys/unseal', { key: recovery });
      expect(u.body?.sealed, `${u.status} ${u.text} ${n.output()}`).toBe(false);
    }
    await until(
      async () => (await Promise.all(nodes.map(roleOf))).filter((r) => r === 'standby').length === 2,
      'two standbys',
    );
  }, 120_000);

  afterAll(async () => {
    for (const n of nodes) await n.stop();
    for (const n of nodes) n.remove();
    pg?.stop();
  });

  const active = async () => {
    for (const n of nodes) if ((await roleOf(n)) === 'active') return n;
    throw new Error('no active node');
  };

  it('has exactly one active node and answers sys/leader, sys/health and sys/ha-status as Vault', async () => {
    const roles = await Promise.all(nodes.map(roleOf));
    expect(roles.filter((r) => r === 'active')).toHaveLength(1);
    const a = await active();
    const s = nodes.find((n) => n !== a)!;
    const la = (await a.req('GET', 'sys/leader')).body;
    expect(la).toMatchObject({ ha_enabled: true, is_self: true, leader_address: a.api, performance_standby: false });
    expect(Date.parse(la.active_time)).toBeGreaterThan(0);
    const ls = (await s.req('GET', 'sys/leader')).body;
    expect(ls).toMatchObject({
      ha_enabled: true,
      is_self: false,
      leader_address: a.api,
      active_time: '0001-01-01T00:00:00Z',
      performance_standby: true,
    });
    expect((await s.req('GET', 'sys/health')).status).toBe(473);
    expect((await s.req('GET', 'sys/health?perfstandbyok=true')).status).toBe(200);
    expect((await s.req('GET', 'sys/health?performancestandbycode=299')).status).toBe(299);
    expect((await a.req('GET', 'sys/health')).status).toBe(200);
    const ha = await a.req('GET', 'sys/ha-status', undefined, { token: root });
    expect(ha.status).toBe(200);
    await until(
      async () => ((await a.req('GET', 'sys/ha-status', undefined, { token: root })).body.nodes?.length ?? 0) === 3,
      'three nodes in ha-status',
    );
    const listed = (await a.req('GET', 'sys/ha-status', undefined, { token: root })).body.nodes as Array<{
      api_address: string;
      active_node: boolean;
      last_echo: string | null;
    }>;
    expect(listed.filter((n) => n.active_node).map((n) => n.api_address)).toEqual([a.api]);
    expect(listed.filter((n) => !n.active_node).every((n) => typeof n.last_echo === 'string')).toBe(true);
  });

  it('reads every write back through every node with X-Vault-Index', async () => {
    expect(
      (await nodes[1]!.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, { token: root }))
        .status,
    ).toBe(204);
    expect((await nodes[2]!.req('POST', 'sys/mounts/transit', { type: 'transit' }, { token: root })).status).toBe(204);
    for (const [i, w] of nodes.entries()) {
      const put = await w.req('POST', `secret/data/app${i}`, { data: { v: `from-${w.name}` } }, { token: root });
      expect(put.status).toBe(200);
      const index = put.headers['x-vault-index'] as string;
      expect(index).toBeTruthy();
      expect(Buffer.from(index, 'base64').toString()).toMatch(/^v1:[^:]+:\d+:0:[0-9a-f]{64}$/);
      for (const r of nodes) {
        const got = await r.req('GET', `secret/data/app${i}`, undefined, {
          token: root,
          headers: { 'X-Vault-Index': index },
        });
        expect(got.status, `read on ${r.name} of a write through ${w.name}`).toBe(200);
        expect(got.body.data.data.v).toBe(`from-${w.name}`);
      }
    }
  });

  it('serves transit crypto on standbys and uses a rotation within 100 ms (invalidation delay)', async () => {
    const a = await active();
    const standbys = nodes.filter((n) => n !== a);
    expect((await standbys[0]!.req('POST', 'transit/keys/k1', {}, { token: root })).status).toBeLessThan(300);
    const pt = Buffer.from('hello').toString('base64');
    const delays: number[] = [];
    for (let round = 0; round < 15; round++) {
      const rot = await a.req('POST', 'transit/keys/k1/rotate', {}, { token: root });
      expect(rot.status).toBe(200);
      const want = rot.body.data.latest_version;
      const t0 = performance.now();
      // Each standby on its own: the delay is from the rotate's answer to its first encrypt under the new version.
      const per = await Promise.all(
        standbys.map(async (s) => {
          for (;;) {
            const enc = await s.req('POST', 'transit/encrypt/k1', { plaintext: pt }, { token: root });
            expect(enc.status).toBe(200);
            if (enc.body.data.ciphertext.startsWith(`vault:v${want}:`)) return performance.now() - t0;
            expect(performance.now() - t0).toBeLessThan(2000);
          }
        }),
      );
      delays.push(...per);
      // Decrypt through another node (the active) works.
      const enc = await standbys[1]!.req('POST', 'transit/encrypt/k1', { plaintext: pt }, { token: root });
      const dec = await a.req('POST', 'transit/decrypt/k1', { ciphertext: enc.body.data.ciphertext }, { token: root });
      expect(dec.body.data.plaintext).toBe(pt);
    }
    delays.sort((x, y) => x - y);
    const p99 = delays[Math.min(delays.length - 1, Math.ceil(delays.length * 0.99) - 1)]!;
    console.log(
      `invalidation delay (rotate answer -> standby encrypt uses the new version): p50 ${delays[Math.floor(delays.length / 2)]!.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores)`,
    );
    // The target is 100 ms. A machine busier than its cores (CI running three suites on two cores)
    // stretches every request, so the bound scales with the load average per core beyond 1.
    const busy = Math.max(1, loadavg()[0]! / cpus().length);
    expect(delays[Math.floor(delays.length / 2)]!).toBeLessThan(100 * busy);
    expect(delays[delays.length - 1]!).toBeLessThan(1000 * busy);
  });

  it('forwards writes with the token intact and refuses a forwarding loop', async () => {
    const a = await active();
    const s = nodes.find((n) => n !== a)!;
    const tok = await s.req('POST', 'auth/token/create', { policies: ['default'] }, { token: root });
    expect(tok.status).toBe(200);
    const id = tok.body.auth.client_token;
    const self = await a.req('GET', 'auth/token/lookup-self', undefined, { token: id });
    expect(self.status).toBe(200);
    const bad = await s.req(
      'POST',
      'secret/data/x',
      { data: { a: 1 } },
      { token: root, headers: { 'X-Keyhold-Forwarded-By': 'other' } },
    );
    expect(bad.status).toBe(503);
    expect(bad.body.errors[0]).toMatch(/not forwarded again/);
    // Bad token through a standby: the active answers 403 (the standby relays it).
    expect((await s.req('POST', 'secret/data/x', { data: { a: 1 } }, { token: 'nope' })).status).toBe(403);
  });

  it('shows HA mode, role and the active address in `keyhold status`', async () => {
    const a = await active();
    const s = nodes.find((n) => n !== a)!;
    const st = async (n: ClusterNode) => {
      const r = await execa(process.execPath, [BIN, 'status', '--format', 'json'], {
        reject: false,
        env: { KEYHOLD_ADDR: `unix://${n.socket}`, KEYHOLD_HOME: n.dir, NO_COLOR: '1' },
      });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      return JSON.parse(String(r.stdout)) as Record<string, unknown>;
    };
    expect(await st(s)).toMatchObject({
      ha_enabled: true,
      ha_mode: 'standby',
      active_node_address: a.api,
      sealed: false,
    });
    const sa = await st(a);
    expect(sa).toMatchObject({ ha_enabled: true, ha_mode: 'active', active_node_address: a.api });
    expect(Date.parse(String(sa.active_since))).toBeGreaterThan(0);
  });

  it('never sends a token to an address planted in the database', async () => {
    const a = await active();
    const s = nodes.find((n) => n !== a)!;
    let trapped = 0;
    const trap = createServer((_req, res) => {
      trapped++;
      res.end('{}');
    });
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', () => r()));
    const port = (trap.address() as { port: number }).port;
    try {
      // Someone with write access to the database plants an advertisement and points the lock at it.
      const plant = JSON.stringify({
        api_addr: `http://127.0.0.1:${port}`,
        cluster_addr: '',
        active_time: new Date().toISOString(),
        node_id: 'evil',
      });
      pg.psql(`INSERT INTO vault_kv_store VALUES ('/core/', '/core/leader/', 'evil', convert_to('${plant}', 'UTF8'))`);
      pg.psql(`UPDATE vault_ha_locks SET ha_value = 'evil' WHERE ha_key = 'core/lock'`);
      await new Promise((r) => setTimeout(r, 1500));
      for (let i = 0; i < 5; i++) {
        const w = await s.req('POST', 'secret/data/planted', { data: { i } }, { token: root });
        // The planted record does not open under the barrier: the standby keeps forwarding to the
        // active it verified (200), or refuses (503); it never follows the database's word.
        expect([200, 503]).toContain(w.status);
      }
      expect(trapped).toBe(0);
    } finally {
      trap.close();
      pg.psql(`DELETE FROM vault_kv_store WHERE path = '/core/leader/' AND key = 'evil'`);
    }
  });

  it('keeps only barrier ciphertext in the database', async () => {
    await nodes[0]!.req(
      'POST',
      'secret/data/needle',
      { data: { password: 'super-secret-needle-4711' } },
      { token: root },
    );
    const dump = pg.psql(`SELECT encode(value, 'escape') FROM vault_kv_store`);
    expect(dump.length).toBeGreaterThan(1000);
    expect(dump).not.toContain('super-secret-needle-4711');
    expect(dump).not.toContain(Buffer.from('super-secret-needle-4711').toString('base64'));
    expect(dump).not.toContain(root);
  });
});
