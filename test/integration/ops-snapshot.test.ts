/**
 * Snapshots (issue 27 part 2): save while writes go on (the snapshot is exactly one index: every
 * write acknowledged before the save began is in it, none begun after it ended, and what is in it is
 * a prefix of the writes), forced restore into a fresh node (it seals; the source's unseal key opens
 * it), same-keyring restore, refusal of altered or truncated files before anything changes, the
 * CLI's save / inspect / restore, and file -> PostgreSQL -> file.
 */
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Answer, type Daemon } from '../support/daemon.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../support/postgres.js';

async function fileNode(): Promise<{ d: Daemon; key: string; root: string }> {
  const d = await startDaemon({ dev: false, args: ['--keychain', 'none'] });
  const init = await d.req(
    'POST',
    'sys/init',
    { secret_shares: 1, secret_threshold: 1, keychain: false },
    { token: null },
  );
  return { d, key: init.body.keys_base64[0], root: init.body.root_token };
}

/** GET the snapshot as bytes over the daemon's socket. */
async function saveSnapshot(d: Daemon, token: string): Promise<Buffer> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath: d.socket,
        path: '/v1/sys/storage/raft/snapshot',
        method: 'GET',
        headers: { 'X-Vault-Token': token },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(Buffer.concat(chunks))
            : reject(new Error(`snapshot ${res.statusCode}: ${Buffer.concat(chunks).toString()}`)),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function restore(d: Daemon, token: string, snap: Buffer, force = false): Promise<Answer> {
  return d.req('POST', force ? 'sys/storage/raft/snapshot-force' : 'sys/storage/raft/snapshot', undefined, {
    token,
    raw: snap,
    headers: { 'Content-Type': 'application/octet-stream' },
  });
}

describe('snapshots on file storage', () => {
  let a: { d: Daemon; key: string; root: string };
  let snap: Buffer;
  let acked: number[] = [];
  let sentAfter = Infinity;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keyhold-ops-snap-'));
    a = await fileNode();
    expect(
      (await a.d.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, { token: a.root })).status,
    ).toBe(204);
    await a.d.req('POST', 'secret/data/base', { data: { v: 'before everything' } }, { token: a.root });
  });
  afterAll(async () => {
    await a?.d.stop();
    if (a) cleanup(a.d.dir);
    cleanup(dir);
  });

  it('takes a snapshot of exactly one index while writes go on', { timeout: 60_000 }, async () => {
    const ackTime: number[] = [];
    const sendTime: number[] = [];
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop && i < 2000; i++) {
        sendTime[i] = performance.now();
        const r = await a.d.req('POST', `secret/data/w${i}`, { data: { i } }, { token: a.root });
        expect(r.status).toBe(200);
        ackTime[i] = performance.now();
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    const began = performance.now();
    snap = await saveSnapshot(a.d, a.root);
    const ended = performance.now();
    await new Promise((r) => setTimeout(r, 200));
    stop = true;
    await writer;
    acked = ackTime.map((t, i) => (t < began ? i : -1)).filter((i) => i >= 0);
    sentAfter = sendTime.findIndex((t) => t > ended);
    expect(acked.length).toBeGreaterThan(3);
    expect(sentAfter).toBeGreaterThan(0);
    expect(snap.subarray(0, 8).toString('latin1')).toBe('KHSNAP01');
    writeFileSync(join(dir, 'a.snap'), snap);
  });

  it('refuses a snapshot of another keyring without force, and an altered or truncated one, changing nothing', async () => {
    const b = await fileNode();
    try {
      await b.d.req('POST', 'sys/mounts/mine', { type: 'kv', options: { version: '2' } }, { token: b.root });
      await b.d.req('POST', 'mine/data/x', { data: { v: 'b' } }, { token: b.root });
      const other = await restore(b.d, b.root, snap);
      expect(other.status).toBe(400);
      expect(other.body.errors[0]).toMatch(/another keyring.*snapshot-force/);
      const altered = Buffer.from(snap);
      altered[Math.floor(altered.length / 2)] ^= 1;
      const alt = await restore(b.d, b.root, altered, true);
      expect(alt.status).toBe(400);
      expect(alt.body.errors[0]).toMatch(/checksum|truncated|altered/);
      const cut = await restore(b.d, b.root, snap.subarray(0, snap.length - 100), true);
      expect(cut.status).toBe(400);
      expect((await b.d.req('GET', 'mine/data/x', undefined, { token: b.root })).body.data.data.v).toBe('b');
      expect((await b.d.req('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(false);
    } finally {
      await b.d.stop();
      cleanup(b.d.dir);
    }
  });

  it('restores into a fresh node with force: it seals, the source key unseals it, and it holds exactly the snapshot index', {
    timeout: 60_000,
  }, async () => {
    const b = await fileNode();
    try {
      const r = await restore(b.d, b.root, snap, true);
      expect(r.status, JSON.stringify(r.body)).toBe(204);
      expect((await b.d.req('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(true);
      expect((await b.d.req('POST', 'sys/unseal', { key: a.key }, { token: null })).body.sealed).toBe(false);
      // The source's root token works; the fresh node's own is gone.
      expect((await b.d.req('GET', 'auth/token/lookup-self', undefined, { token: b.root })).status).toBe(403);
      expect((await b.d.req('GET', 'secret/data/base', undefined, { token: a.root })).body.data.data.v).toBe(
        'before everything',
      );
      const present: boolean[] = [];
      const n = sentAfter + 5;
      for (let i = 0; i < n; i++)
        present[i] = (await b.d.req('GET', `secret/data/w${i}`, undefined, { token: a.root })).status === 200;
      for (const i of acked) expect(present[i], `write ${i} was acknowledged before the snapshot began`).toBe(true);
      for (let i = sentAfter; i < n; i++)
        expect(present[i], `write ${i} was sent after the snapshot ended`).toBe(false);
      const last = present.lastIndexOf(true);
      expect(present.slice(0, last + 1).every(Boolean), 'the snapshot holds a prefix of the writes (one index)').toBe(
        true,
      );
    } finally {
      await b.d.stop();
      cleanup(b.d.dir);
    }
  });

  it('restores onto its own store (same keyring): later writes and key terms are gone, the node stays unsealed, and survives a restart', {
    timeout: 60_000,
  }, async () => {
    await a.d.req('POST', 'sys/rotate', {}, { token: a.root });
    await a.d.req('POST', 'secret/data/later', { data: { v: 'after the snapshot' } }, { token: a.root });
    const r = await restore(a.d, a.root, snap);
    expect(r.status, JSON.stringify(r.body)).toBe(204);
    expect((await a.d.req('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(false);
    expect((await a.d.req('GET', 'secret/data/later', undefined, { token: a.root })).status).toBe(404);
    expect((await a.d.req('GET', 'secret/data/base', undefined, { token: a.root })).body.data.data.v).toBe(
      'before everything',
    );
    // The snapshot was taken under term 1: the rotation after it is undone with it.
    expect((await a.d.req('GET', 'sys/key-status', undefined, { token: a.root })).body.data.term).toBe(1);
    await a.d.req('POST', 'secret/data/after-restore', { data: { v: 'new' } }, { token: a.root });
    await a.d.stop();
    a.d = await startDaemon({ dev: false, dir: a.d.dir, args: ['--keychain', 'none'] });
    expect((await a.d.req('POST', 'sys/unseal', { key: a.key }, { token: null })).body.sealed).toBe(false);
    expect((await a.d.req('GET', 'secret/data/after-restore', undefined, { token: a.root })).body.data.data.v).toBe(
      'new',
    );
    expect((await a.d.req('GET', 'secret/data/base', undefined, { token: a.root })).body.data.data.v).toBe(
      'before everything',
    );
  });

  it('CLI: operator snapshot save, inspect (and a refused altered file), restore', async () => {
    const file = join(dir, 'cli.snap');
    const save = await a.d.cli(['operator', 'snapshot', 'save', file], { token: a.root });
    expect(save.exitCode, save.stderr).toBe(0);
    const ins = await a.d.cli(['operator', 'snapshot', 'inspect', file, '--format', 'json'], { token: null });
    expect(ins.exitCode, ins.stderr).toBe(0);
    const info = JSON.parse(ins.stdout);
    expect(info).toMatchObject({ term: 1, backend: 'file' });
    expect(info.records).toBeGreaterThan(5);
    expect(info.sha256).toMatch(/^[0-9a-f]{64}$/);
    const table = await a.d.cli(['operator', 'snapshot', 'inspect', file], { token: null });
    expect(table.stdout).toMatch(/Keyring Term\s+1/);
    const bad = Buffer.from(readFileSync(file));
    bad[20] ^= 0xff;
    writeFileSync(join(dir, 'bad.snap'), bad);
    const insBad = await a.d.cli(['operator', 'snapshot', 'inspect', join(dir, 'bad.snap')], { token: null });
    expect(insBad.exitCode).toBe(1);
    expect(insBad.stderr).toMatch(/checksum mismatch/);
    const res = await a.d.cli(['operator', 'snapshot', 'restore', file], { token: a.root });
    expect(res.exitCode, res.stderr).toBe(0);
  });
});

describe('scheduled snapshots (snapshot-auto)', () => {
  it('takes one every interval, keeps the newest `retain`, reports status, refuses bad configs naming the field', {
    timeout: 60_000,
  }, async () => {
    const a = await fileNode();
    const out = mkdtempSync(join(tmpdir(), 'keyhold-ops-auto-'));
    try {
      const bad = await a.d.req(
        'POST',
        'sys/storage/raft/snapshot-auto/config/hourly',
        { interval: '1s', storage_type: 'aws-s3', path_prefix: out },
        { token: a.root },
      );
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0]).toMatch(/^storage_type: /);
      const rel = await a.d.req(
        'POST',
        'sys/storage/raft/snapshot-auto/config/hourly',
        { interval: '1s', storage_type: 'local', path_prefix: 'relative/dir' },
        { token: a.root },
      );
      expect(rel.body.errors[0]).toMatch(/^path_prefix: /);
      const ok = await a.d.req(
        'POST',
        'sys/storage/raft/snapshot-auto/config/hourly',
        { interval: '1s', retain: 2, storage_type: 'local', path_prefix: out, file_prefix: 'kh' },
        { token: a.root },
      );
      expect(ok.status).toBe(204);
      expect(
        (await a.d.req('LIST', 'sys/storage/raft/snapshot-auto/config', undefined, { token: a.root })).body.data.keys,
      ).toEqual(['hourly']);
      expect(
        (await a.d.req('GET', 'sys/storage/raft/snapshot-auto/config/hourly', undefined, { token: a.root })).body.data,
      ).toMatchObject({
        interval: 1,
        retain: 2,
        storage_type: 'local',
        path_prefix: out,
        file_prefix: 'kh',
        local_max_space: 0,
      });
      let files: string[] = [];
      for (let i = 0; i < 100 && files.length < 2; i++) {
        await new Promise((r) => setTimeout(r, 100));
        files = readdirSync(out).filter((f) => f.endsWith('.snap'));
      }
      await new Promise((r) => setTimeout(r, 2500));
      files = readdirSync(out)
        .filter((f) => f.endsWith('.snap'))
        .sort();
      expect(files).toHaveLength(2);
      for (const f of files) expect(f).toMatch(/^kh-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z\.snap$/);
      const st = (await a.d.req('GET', 'sys/storage/raft/snapshot-auto/status/hourly', undefined, { token: a.root }))
        .body.data;
      expect(st.consecutive_errors).toBe(0);
      expect(st.last_snapshot_url).toMatch(new RegExp(`^file://${out}/kh-`));
      expect(Date.parse(st.next_snapshot_start)).toBeGreaterThan(Date.parse(st.last_snapshot_end) - 1);
      const ins = await a.d.cli(['operator', 'snapshot', 'inspect', join(out, files[1]!), '--format', 'json'], {
        token: null,
      });
      expect(ins.exitCode, ins.stderr).toBe(0);
      // A space limit smaller than one snapshot: the attempt fails and says so.
      await a.d.req(
        'POST',
        'sys/storage/raft/snapshot-auto/config/hourly',
        { interval: '1s', retain: 2, storage_type: 'local', path_prefix: out, file_prefix: 'kh', local_max_space: 10 },
        { token: a.root },
      );
      let st2 = st;
      for (let i = 0; i < 50 && st2.consecutive_errors === 0; i++) {
        await new Promise((r) => setTimeout(r, 200));
        st2 = (await a.d.req('GET', 'sys/storage/raft/snapshot-auto/status/hourly', undefined, { token: a.root })).body
          .data;
      }
      expect(st2.last_snapshot_error).toMatch(/not enough space/);
      expect(
        (await a.d.req('DELETE', 'sys/storage/raft/snapshot-auto/config/hourly', undefined, { token: a.root })).status,
      ).toBe(204);
      expect(
        (await a.d.req('GET', 'sys/storage/raft/snapshot-auto/status/hourly', undefined, { token: a.root })).status,
      ).toBe(404);
    } finally {
      await a.d.stop();
      cleanup(a.d.dir);
      cleanup(out);
    }
  });
});

const pgSkip = postgresUnavailable();
describe.skipIf(pgSkip !== null)('a snapshot moves between file and PostgreSQL storage', () => {
  let pg: TestPostgres;
  beforeAll(() => {
    pg = startPostgres({ fsync: false });
  });
  afterAll(() => pg?.stop());

  it('file -> PostgreSQL -> file', { timeout: 90_000 }, async () => {
    const a = await fileNode();
    const pdir = mkdtempSync(join(tmpdir(), 'keyhold-ops-snap-pg-'));
    const cfg = join(pdir, 'pg.hcl');
    writeFileSync(
      cfg,
      `storage "postgresql" {\n  connection_url = "${pg.url}"\n  ha_enabled = "false"\n}\nkeychain = "none"\n`,
    );
    let p: Daemon | undefined;
    let c: Awaited<ReturnType<typeof fileNode>> | undefined;
    try {
      await a.d.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, { token: a.root });
      await a.d.req('POST', 'secret/data/travel', { data: { v: 'from file' } }, { token: a.root });
      const s1 = await saveSnapshot(a.d, a.root);
      p = await startDaemon({ dev: false, args: ['--config', cfg] });
      const pi = await p.req(
        'POST',
        'sys/init',
        { secret_shares: 1, secret_threshold: 1, keychain: false },
        { token: null },
      );
      expect(pi.status).toBe(200);
      expect((await restore(p, pi.body.root_token, s1, true)).status).toBe(204);
      expect((await p.req('POST', 'sys/unseal', { key: a.key }, { token: null })).body.sealed).toBe(false);
      expect((await p.req('GET', 'secret/data/travel', undefined, { token: a.root })).body.data.data.v).toBe(
        'from file',
      );
      await p.req('POST', 'secret/data/travel2', { data: { v: 'written on postgresql' } }, { token: a.root });
      const s2 = await saveSnapshot(p, a.root);
      expect(s2.includes(Buffer.from('"backend":"postgresql"'))).toBe(true);
      c = await fileNode();
      expect((await restore(c.d, c.root, s2, true)).status).toBe(204);
      expect((await c.d.req('POST', 'sys/unseal', { key: a.key }, { token: null })).body.sealed).toBe(false);
      expect((await c.d.req('GET', 'secret/data/travel2', undefined, { token: a.root })).body.data.data.v).toBe(
        'written on postgresql',
      );
      expect((await c.d.req('GET', 'secret/data/travel', undefined, { token: a.root })).body.data.data.v).toBe(
        'from file',
      );
    } finally {
      await p?.stop();
      await c?.d.stop();
      await a.d.stop();
      cleanup(a.d.dir);
      if (p) cleanup(p.dir);
      if (c) cleanup(c.d.dir);
      cleanup(pdir);
    }
  });
});
