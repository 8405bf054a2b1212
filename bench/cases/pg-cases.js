/**
 * Cluster cases (issue 13): keyhold nodes on a real PostgreSQL started for the run (bench/lib/postgres.js).
 * - pg-encrypt-standby: encrypt served by a standby vs by the active (ratio >= 0.9)
 * - pg-kv-put: KV v2 put latency on PostgreSQL vs the file backend of the main daemon (ratio <= 3)
 * - pg-failover: kill -9 of the active to the first 200 answered by the new active (p50 <= 5 s)
 * - pg-start-100000: start, unseal and first encrypt on a database of 100,000 records (<= 3 s)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, apiOk } from '../lib/http.js';
import { runLoad } from '../lib/load.js';
import { startPostgres } from '../lib/postgres.js';
import { BIN, freePort, waitAnswer } from '../lib/procs.js';
import { median, percentile } from '../lib/stats.js';

const le = (on, limit) => ({ on, op: '<=', limit });
const ge = (on, limit) => ({ on, op: '>=', limit });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const PT64 = Buffer.alloc(64, 7).toString('base64');

let pgShared = null;
/** One PostgreSQL for all cluster cases of a run (stopped when the process exits). */
function pg() {
  if (!pgShared) {
    pgShared = startPostgres();
    process.once('exit', () => pgShared?.stop());
  }
  return pgShared;
}

/** Start a node: HCL config with storage "postgresql", a Unix socket and a TCP api_addr. */
async function startNode(ctx, name, url, { ha = true, lockTtl = '15s' } = {}) {
  const dir = join(ctx.dir, `pg-${name}`);
  mkdirSync(dir, { recursive: true });
  const socket = join(dir, 'k.sock');
  const port = await freePort();
  const config = join(dir, 'node.hcl');
  writeFileSync(
    config,
    `storage "postgresql" {\n  connection_url = "${url}"\n  ha_enabled = "${ha}"\n  ha_lock_ttl = "${lockTtl}"\n}\n` +
      `listener "unix" {\n  address = "${socket}"\n}\nlistener "tcp" {\n  address = "127.0.0.1:${port}"\n  tls_disable = true\n}\n` +
      `api_addr = "http://127.0.0.1:${port}"\nkeychain = "none"\nlog_level = "error"\n`,
  );
  const node = {
    name,
    socket,
    unix: { socketPath: socket },
    proc: null,
    startedAt: 0,
    output: () => out,
    async start(waitReady = true) {
      out = '';
      node.startedAt = performance.now();
      node.proc = spawn(process.execPath, [BIN, 'server', '--config', config], {
        env: { ...process.env, KEYHOLD_HOME: dir, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      node.proc.stdout.on('data', (c) => (out += c));
      node.proc.stderr.on('data', (c) => (out += c));
      if (waitReady) await waitAnswer(node);
    },
    kill9: () =>
      new Promise((r) =>
        node.proc.exitCode !== null || node.proc.signalCode
          ? r()
          : (node.proc.once('exit', () => r()), node.proc.kill('SIGKILL')),
      ),
    stop: () =>
      new Promise((r) =>
        node.proc.exitCode !== null || node.proc.signalCode
          ? r()
          : (node.proc.once('exit', () => r()), node.proc.kill('SIGTERM')),
      ),
  };
  let out = '';
  process.once('exit', () => node.proc?.exitCode === null && node.proc.kill('SIGKILL'));
  await node.start();
  return node;
}

async function health(n) {
  try {
    return (await api(n.unix, 'GET', 'sys/health')).status;
  } catch {
    return 0;
  }
}

async function until(fn, what, ms = 60_000) {
  const end = performance.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Two or more nodes on a fresh database: init on the first, unseal the rest, wait for the standbys. */
async function cluster(ctx, prefix, count, opts) {
  const db = pg().newDb();
  const nodes = [];
  for (let i = 0; i < count; i++) nodes.push(await startNode(ctx, `${prefix}${i}`, db.url, opts));
  const init = await apiOk(nodes[0].unix, 'POST', 'sys/init', { keychain: false });
  const key = init.keys[0];
  for (const n of nodes.slice(1)) await apiOk(n.unix, 'POST', 'sys/unseal', { key });
  await until(
    async () => (await Promise.all(nodes.map(health))).filter((s) => s === 473).length === count - 1,
    'standbys',
  );
  const root = init.root_token;
  await apiOk(nodes[0].unix, 'POST', 'sys/mounts/transit', { type: 'transit' }, root);
  await apiOk(nodes[0].unix, 'POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, root);
  await apiOk(nodes[0].unix, 'POST', 'transit/keys/bench', {}, root);
  return { db, nodes, root, key };
}

async function activeOf(nodes) {
  for (const n of nodes) if (n.proc.exitCode === null && !n.proc.signalCode && (await health(n)) === 200) return n;
  return null;
}

/** Cases of the cluster. */
export const pgCases = [
  {
    id: 'pg-encrypt-standby',
    unit: 'req/s',
    checks: [ge('ratio', 0.9)],
    describe:
      'encrypt 64 B on a PostgreSQL cluster, Unix socket, 8 connections to each node at once: served by a standby (from its cache) vs by the active; ratio = standby / active',
    async run(ctx) {
      const c = await cluster(ctx, 'enc', 2);
      try {
        const a = await activeOf(c.nodes);
        const s = c.nodes.find((n) => n !== a);
        const load = (n) =>
          runLoad({
            target: n.unix,
            path: '/v1/transit/encrypt/bench',
            body: { plaintext: PT64 },
            headers: { 'X-Vault-Token': c.root },
            connections: 8,
            warmupSec: ctx.cfg.warmupSec,
            durationSec: ctx.cfg.durationSec,
          });
        const sr = [];
        const ar = [];
        // Both nodes under load at the same time (8 connections each): on a shared, busy machine the
        // two sides then see the same conditions, which back-to-back runs do not.
        for (let rep = 0; rep < ctx.cfg.reps; rep++) {
          const [x, y] = await Promise.all([load(a), load(s)]);
          ar.push(x);
          sr.push(y);
        }
        const bad = [...sr, ...ar].reduce((x, r) => x + r.bad, 0);
        return {
          value: median(sr.map((r) => r.rps)),
          baseline: median(ar.map((r) => r.rps)),
          detail: {
            standby_p99_ms: median(sr.map((r) => r.latency.p99)),
            active_p99_ms: median(ar.map((r) => r.latency.p99)),
          },
          bad,
        };
      } finally {
        for (const n of c.nodes) await n.stop();
      }
    },
  },
  {
    id: 'pg-kv-put',
    unit: 'ms',
    checks: [le('ratio', 3)],
    describe:
      'KV v2 put latency (one client, sequential, median) on the PostgreSQL active (fsync on) vs the main daemon on file storage (a durable log append per write)',
    async run(ctx) {
      const c = await cluster(ctx, 'kv', 1, { ha: true });
      try {
        const a = c.nodes[0];
        const fileMount = await api(
          ctx.kh.unix,
          'POST',
          'sys/mounts/secret',
          { type: 'kv', options: { version: '2' } },
          ctx.rootToken,
        );
        if (fileMount.status >= 300 && !/already in use/.test(JSON.stringify(fileMount.body)))
          throw new Error(`mount secret/ on the file daemon: ${fileMount.status}`);
        const n = ctx.cfg.quick ? 200 : 1000;
        const time = async (target, token, tag) => {
          const out = [];
          for (let i = 0; i < n; i++) {
            const t0 = performance.now();
            const r = await api(
              target,
              'POST',
              `secret/data/${tag}-${i % 50}`,
              { data: { v: i, pad: 'x'.repeat(64) } },
              token,
            );
            out.push(performance.now() - t0);
            if (r.status !== 200) throw new Error(`kv put ${tag}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
          }
          return out;
        };
        await time(a.unix, c.root, 'warm');
        await time(ctx.kh.unix, ctx.rootToken, 'warm');
        const p = await time(a.unix, c.root, 'pg');
        const f = await time(ctx.kh.unix, ctx.rootToken, 'file');
        return {
          value: median(p),
          baseline: median(f),
          detail: { puts: n, pg_p99_ms: percentile(p, 99), file_p99_ms: percentile(f, 99) },
        };
      } finally {
        for (const n of c.nodes) await n.stop();
      }
    },
  },
  {
    id: 'pg-failover',
    unit: 'ms',
    checks: [le('value', 5000)],
    describe:
      "three nodes, lock TTL 15 s (Vault default): kill -9 of the active -> first 200 write answered by the new active, median of runs (a killed holder's lock is free at once: its PostgreSQL session ends); no baseline",
    async run(ctx) {
      const c = await cluster(ctx, 'fo', 3);
      const times = [];
      try {
        const runs = ctx.cfg.quick ? 3 : 10;
        for (let i = 0; i < runs; i++) {
          const old = await until(() => activeOf(c.nodes), 'an active node');
          const t0 = performance.now();
          await old.kill9();
          await until(async () => {
            for (const n of c.nodes) {
              if (n === old) continue;
              const r = await api(n.unix, 'POST', 'secret/data/failover', { data: { i } }, c.root).catch(() => null);
              if (r?.status === 200 && (await health(n)) === 200) return true;
            }
            return false;
          }, 'a new active node');
          times.push(performance.now() - t0);
          await old.start();
          await apiOk(old.unix, 'POST', 'sys/unseal', { key: c.key });
          await until(async () => (await health(old)) === 473, 'the restarted node as standby');
        }
        return { value: median(times), baseline: null, detail: { runs: times, max_ms: Math.max(...times) } };
      } finally {
        for (const n of c.nodes) await n.stop();
      }
    },
  },
  {
    id: 'pg-start-100000',
    unit: 'ms',
    checks: [le('value', 3000)],
    describe:
      'start on a PostgreSQL database of 100,000 records (quick: 20,000): spawn -> health -> unseal -> first encrypt 200, wall ms (median); baseline: the same database with only the set-up records',
    async run(ctx) {
      const records = ctx.cfg.quick ? 20_000 : 100_000;
      const c = await cluster(ctx, 'st', 1, { ha: false });
      const node = c.nodes[0];
      const timeStart = async () => {
        await node.stop();
        await node.start(false);
        await waitAnswer(node, 2);
        await apiOk(node.unix, 'POST', 'sys/unseal', { key: c.key });
        for (let i = 0; i < 10_000; i++) {
          const r = await api(node.unix, 'POST', 'transit/encrypt/bench', { plaintext: PT64 }, c.root);
          if (r.status === 200) return performance.now() - node.startedAt;
          if (r.status !== 503) throw new Error(`first encrypt: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
          await sleep(2);
        }
        throw new Error('no encrypt answered');
      };
      try {
        const base = [];
        for (let rep = 0; rep < ctx.cfg.reps; rep++) base.push(await timeStart());
        // 100,000 KV-shaped records (opaque bytes, as barrier records are) under the KV mount's prefix.
        const mounts = (await apiOk(node.unix, 'GET', 'sys/mounts', undefined, c.root)).data;
        const uuid = mounts['secret/'].uuid;
        pg().psql(
          `INSERT INTO vault_kv_store SELECT '/logical/${uuid}/', '/logical/${uuid}/versions/' || (i % 1000) || '/', 'r' || i, gen_random_bytes(120) FROM generate_series(1, ${records}) i; ANALYZE vault_kv_store`.replace(
            'gen_random_bytes(120)',
            "decode(md5(i::text) || md5((i+1)::text) || md5((i+2)::text), 'hex')",
          ),
          c.db.name,
        );
        const count = Number(pg().psql('SELECT count(*) FROM vault_kv_store', c.db.name).trim());
        const many = [];
        for (let rep = 0; rep < ctx.cfg.reps; rep++) many.push(await timeStart());
        return {
          value: median(many),
          baseline: median(base),
          detail: { records: count, reps: many, baseline_reps: base },
          note: ctx.cfg.quick ? `${records} records (quick)` : undefined,
        };
      } finally {
        await node.stop();
      }
    },
  },
];
