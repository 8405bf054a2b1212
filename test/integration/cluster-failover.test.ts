/**
 * Faults of a cluster on real PostgreSQL with real daemons: 20 failovers (kill -9 of the active under
 * a steady write load), fencing of a paused active, and a PostgreSQL restart mid-load. Lock TTLs are
 * short (2-3 s) so the suite stays within a couple of minutes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../support/postgres.js';
import { roleOf, startNode, until, type ClusterNode } from '../support/cluster.js';

const skip = postgresUnavailable();

interface Setup {
  nodes: ClusterNode[];
  root: string;
  recovery: string;
}

const all: ClusterNode[] = [];

async function cluster(pg: TestPostgres, table: string, count: number, lockTtl = '2s'): Promise<Setup> {
  const nodes: ClusterNode[] = [];
  for (let i = 0; i < count; i++) nodes.push(await startNode(`${table}-${i}`, { url: pg.url, table, lockTtl }));
  all.push(...nodes);
  const init = await nodes[0]!.req('POST', 'sys/init', { keychain: false });
  expect(init.status).toBe(200);
  for (const n of nodes.slice(1))
    expect((await n.req('POST', 'sys/unseal', { key: init.body.keys[0] })).body.sealed).toBe(false);
  await until(
    async () => (await Promise.all(nodes.map(roleOf))).filter((r) => r === 'standby').length === count - 1,
    'standbys',
  );
  const root = init.body.root_token as string;
  await until(() => activeOf(nodes), 'an active node');
  expect(
    (await nodes[0]!.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, { token: root }))
      .status,
  ).toBe(204);
  expect((await nodes[0]!.req('POST', 'sys/mounts/transit', { type: 'transit' }, { token: root })).status).toBe(204);
  expect((await nodes[0]!.req('POST', 'transit/keys/k', {}, { token: root })).status).toBeLessThan(300);
  // Every node sees the mounts and the key before a test loads it (a standby serving transit/encrypt
  // a moment before it saw the key answered 404 once on CI).
  for (const n of nodes)
    await until(
      async () => (await n.req('GET', 'transit/keys/k', undefined, { token: root })).status === 200,
      `node ${n.name} sees transit/keys/k`,
    );
  return { nodes, root, recovery: init.body.keys[0] };
}

async function activeOf(nodes: ClusterNode[]): Promise<ClusterNode | null> {
  for (const n of nodes)
    if (n.proc && n.proc.exitCode === null && !n.proc.signalCode && (await roleOf(n)) === 'active') return n;
  return null;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))]!;
}

describe.skipIf(!!skip)('cluster faults on PostgreSQL', () => {
  let pg: TestPostgres;
  beforeAll(() => {
    pg = startPostgres();
  });
  afterAll(async () => {
    for (const n of all) await n.kill9();
    for (const n of all) n.remove();
    pg?.stop();
  });

  it('survives 20 kill -9 failovers under a steady write load without losing an acknowledged write', async () => {
    const { nodes, root, recovery } = await cluster(pg, 'fo', 3);
    const acked = new Map<string, string>();
    const ciphertexts: Array<{ ct: string; pt: string }> = [];
    let stop = false;
    let seq = 0;
    const bad: string[] = [];
    // Writers: each picks a live node and writes; only 200s count as acknowledged.
    const writer = async (w: number) => {
      while (!stop) {
        const live = nodes.filter((n) => n.proc && n.proc.exitCode === null && !n.proc.signalCode);
        const n = live[(seq + w) % live.length]!;
        const i = seq++;
        const key = `w${w}-${i}`;
        const pt = Buffer.from(`payload-${i}`).toString('base64');
        try {
          const r = await n.req('POST', `secret/data/${key}`, { data: { i } }, { token: root });
          if (r.status === 200) acked.set(key, String(i));
          else if (r.status >= 500 && r.status !== 503) bad.push(`${r.status} ${r.text}`);
          const e = await n.req('POST', 'transit/encrypt/k', { plaintext: pt }, { token: root });
          if (e.status === 200) ciphertexts.push({ ct: e.body.data.ciphertext, pt });
          else if (e.status >= 500 && e.status !== 503) bad.push(`${e.status} ${e.text}`);
        } catch {
          /* the node died under us: not acknowledged */
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    const writers = [0, 1, 2].map(writer);
    const times: number[] = [];
    // A killed node restarts in the background while the next round runs (at most one node is down
    // at a time, so a standby is always there to take over); this keeps 20 rounds near a minute.
    const restarts: Array<Promise<void>> = [];
    const restart = async (n: ClusterNode) => {
      await n.start();
      // A connection cut during the unseal (seen once on CI as "socket hang up") is tried again; a
      // node that died meanwhile fails the test with its output.
      const unsealed = await until(
        async () => {
          if (n.proc?.exitCode !== null || n.proc?.signalCode)
            throw new Error(`node ${n.name} exited during its restart: ${n.output()}`);
          return (await n.req('POST', 'sys/unseal', { key: recovery })).body;
        },
        'the restarted node unsealed',
        20_000,
        100,
      );
      expect(unsealed.sealed, n.output()).toBe(false);
      // Usually a standby; it is the active when the next round killed the active while it restarted.
      await until(
        async () => ['standby', 'active'].includes(await roleOf(n)),
        'the restarted node back in the cluster',
      );
    };
    for (let round = 0; round < 20; round++) {
      // The node killed two rounds ago is back; the one killed last round may still be starting.
      await restarts[round - 2];
      const old = await until(() => activeOf(nodes), 'an active node');
      const t0 = performance.now();
      await old.kill9();
      // Failover time: kill -9 to the first 200 answered by the new active (a write through it).
      const next = await until(
        async () => {
          for (const n of nodes) {
            if (n === old || !n.proc || n.proc.exitCode !== null || n.proc.signalCode) continue;
            const r = await n.req('POST', 'secret/data/probe', { data: { round } }, { token: root }).catch(() => null);
            if (r?.status === 200 && (await roleOf(n)) === 'active') return n;
          }
          return null;
        },
        'a new active node',
        20_000,
        20,
      );
      times.push(performance.now() - t0);
      expect(next).not.toBe(old);
      restarts.push(restart(old));
    }
    await Promise.all(restarts);
    stop = true;
    await Promise.all(writers);
    times.sort((a, b) => a - b);
    console.log(
      `failover (kill -9 -> first 200 from the new active) over ${times.length} rounds: p50 ${pct(times, 0.5).toFixed(0)} ms, max ${times[times.length - 1]!.toFixed(0)} ms`,
    );
    expect(pct(times, 0.5)).toBeLessThan(5000);
    expect(bad).toEqual([]);
    expect(acked.size).toBeGreaterThan(50);
    const reader = (await activeOf(nodes))!;
    for (const [key, i] of acked) {
      const r = await reader.req('GET', `secret/data/${key}`, undefined, { token: root });
      expect(r.status, key).toBe(200);
      expect(String(r.body.data.data.i)).toBe(i);
    }
    for (const { ct, pt } of ciphertexts) {
      const d = await reader.req('POST', 'transit/decrypt/k', { ciphertext: ct }, { token: root });
      expect(d.status, ct).toBe(200);
      expect(d.body.data.plaintext).toBe(pt);
    }
  }, 240_000);

  it('fences a paused active: it completes no write of its own after losing the lock, steps down, the new active keeps its data', async () => {
    const { nodes, root } = await cluster(pg, 'fence', 2);
    const a = (await activeOf(nodes))!;
    const b = nodes.find((n) => n !== a)!;
    expect((await a.req('POST', 'secret/data/fenced', { data: { by: 'a-before' } }, { token: root })).status).toBe(200);
    a.proc!.kill('SIGSTOP');
    try {
      // The request reaches the paused process's socket and waits there: in flight across the takeover.
      const inflight = a.req('POST', 'secret/data/fenced', { data: { by: 'a-inflight' } }, { token: root });
      await until(async () => (await roleOf(b)) === 'active', 'the standby to take over after the lock TTL', 20_000);
      expect((await b.req('POST', 'secret/data/fenced', { data: { by: 'b' } }, { token: root })).status).toBe(200);
      a.proc!.kill('SIGCONT');
      const r = await inflight;
      console.log(
        `fencing: the paused active's in-flight write answered ${r.status} ${r.status === 200 ? '(forwarded to the new active)' : r.text.trim()}`,
      );
      // Either fenced by the database (503 naming the lock) or, when the old node had already stepped
      // down, forwarded to the new active (whose answer carries its X-Vault-Index). Never its own write.
      if (r.status === 200) expect(r.headers['x-vault-index']).toBeTruthy();
      else {
        expect(r.status).toBe(503);
        expect(r.body.errors[0]).toMatch(/lock has changed ownership|not active/);
      }
    } finally {
      a.proc!.kill('SIGCONT');
    }
    await until(async () => (await roleOf(a)) === 'standby', 'the old active to step down');
    const read = await b.req('GET', 'secret/data/fenced', undefined, { token: root });
    const meta = await b.req('GET', 'secret/metadata/fenced', undefined, { token: root });
    expect(['b', 'a-inflight']).toContain(read.body.data.data.by);
    // Versions stay consistent: each acknowledged write is one version, none overwritten.
    expect(Object.keys(meta.body.data.versions).length).toBe(read.body.data.data.by === 'b' ? 2 : 3);
    // Later writes through the old node go to the new active.
    const later = await a.req('POST', 'secret/data/fenced2', { data: { by: 'through-a' } }, { token: root });
    expect(later.status, later.text + a.output()).toBe(200);
    expect((await b.req('GET', 'secret/data/fenced2', undefined, { token: root })).body.data.data.by).toBe('through-a');
    expect(pg.psql(`SELECT count(*) FROM fence_ha WHERE ha_key = 'core/lock'`).trim()).toBe('1');
  }, 120_000);

  it('rides out a PostgreSQL restart: only 200 or 503 during the gap, no other 5xx, recovery by itself', async () => {
    const { nodes, root } = await cluster(pg, 'restart', 2, '3s');
    const statuses = new Map<number, number>();
    let stop = false;
    let i = 0;
    const load = (async () => {
      while (!stop) {
        for (const n of nodes) {
          const r = await n.req('POST', `secret/data/r${i++}`, { data: { i } }, { token: root }).catch(() => null);
          if (r) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          const g = await n.req('POST', 'transit/encrypt/k', { plaintext: 'aGk=' }, { token: root }).catch(() => null);
          if (g) statuses.set(g.status, (statuses.get(g.status) ?? 0) + 1);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await new Promise((r) => setTimeout(r, 500));
    pg.pause();
    await new Promise((r) => setTimeout(r, 2000));
    pg.resume();
    const t0 = performance.now();
    await until(async () => (await activeOf(nodes)) !== null, 'an active node after the restart', 30_000);
    const a = (await activeOf(nodes))!;
    await until(
      async () => (await a.req('POST', 'secret/data/after', { data: { ok: 1 } }, { token: root })).status === 200,
      'a write after the restart',
      30_000,
    );
    console.log(
      `PostgreSQL restart: writes accepted again ${(performance.now() - t0).toFixed(0)} ms after it came back; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    stop = true;
    await load;
    const fiveXX = [...statuses.keys()].filter((s) => s >= 500 && s !== 503);
    expect(fiveXX).toEqual([]);
    // Requests in the gap either waited out the storage retries (200) or got 503: nothing else. On a
    // quiet machine a short gap is covered by the retries alone, so 503 is allowed but not required.
    expect(
      [...statuses.keys()].every((s) => s === 200 || s === 503),
      JSON.stringify(Object.fromEntries(statuses)),
    ).toBe(true);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    for (const n of nodes) expect(['active', 'standby']).toContain(await roleOf(n));
  }, 120_000);

  it('refuses to start a node of one cluster on the table of another (different barrier keys), saying why', async () => {
    const one = await cluster(pg, 'one', 1);
    const other = await cluster(pg, 'other', 1);
    const stray = other.nodes[0]!;
    await stray.stop();
    // The node's config now names the first cluster's table.
    const cfg = readFileSync(stray.config, 'utf8')
      .replace(/table = "other"/, 'table = "one"')
      .replace(/ha_table = "other_ha"/, 'ha_table = "one_ha"');
    writeFileSync(stray.config, cfg);
    await expect(stray.start()).rejects.toThrow(/exited with 1/);
    expect(stray.output()).toMatch(
      /storage\.postgresql: this node belongs to the cluster with storage id [0-9a-f-]+ .* holds another cluster's data \(storage id [0-9a-f-]+, different barrier keys\)/,
    );
    expect(await roleOf(one.nodes[0]!)).toBe('active');
  }, 60_000);
});
