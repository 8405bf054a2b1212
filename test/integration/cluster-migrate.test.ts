/**
 * `keyhold operator migrate -config migrate.hcl`: file -> postgresql -> file round trip with
 * byte-identical records, the migrated store served (keys, versions, KV, sync state), and the
 * refusals (a running source, a migration lock, an initialised destination).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileBackend } from '../../src/storage/file.js';
import { listAll } from '../../src/storage/backend.js';
import { BIN, startDaemon } from '../support/daemon.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../support/postgres.js';
import { startNode, until, roleOf } from '../support/cluster.js';

const skip = postgresUnavailable();

async function cli(args: string[], env: Record<string, string> = {}) {
  const r = await execa(process.execPath, [BIN, ...args], { reject: false, env: { NO_COLOR: '1', ...env } });
  return { code: r.exitCode, out: String(r.stdout), err: String(r.stderr) };
}

async function records(path: string): Promise<Map<string, string>> {
  const b = new FileBackend(path);
  b.openSync();
  const out = new Map<string, string>();
  for (const k of await listAll(b, '')) out.set(k, (await b.get(k))!.toString('base64'));
  await b.close();
  return out;
}

describe.skipIf(!!skip)('operator migrate', () => {
  let pg: TestPostgres;
  const dirs: string[] = [];
  beforeAll(() => {
    pg = startPostgres();
  });
  afterAll(() => {
    pg?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('copies file -> postgresql -> file byte for byte, and the migrated store serves keys, versions, KV and sync state', async () => {
    // A file store with transit keys (rotated), KV versions and sync config.
    const d = await startDaemon({ dev: false, args: ['--keychain', 'none'] });
    dirs.push(d.dir);
    const init = await d.req('POST', 'sys/init', { keychain: false }, { token: null });
    const root = init.body.root_token as string;
    const recovery = init.body.keys[0] as string;
    const as = { token: root };
    await d.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, as);
    await d.req('POST', 'sys/mounts/transit', { type: 'transit' }, as);
    await d.req('POST', 'transit/keys/mk', {}, as);
    await d.req('POST', 'transit/keys/mk/rotate', {}, as);
    const ct = (await d.req('POST', 'transit/encrypt/mk', { plaintext: 'bWlncmF0ZQ==' }, as)).body.data
      .ciphertext as string;
    expect(ct.startsWith('vault:v2:')).toBe(true);
    await d.req('POST', 'secret/data/app', { data: { v: 1 } }, as);
    await d.req('POST', 'secret/data/app', { data: { v: 2 } }, as);
    expect((await d.req('POST', 'sys/sync/config', { queue_capacity: 777 }, as)).status).toBe(200);
    const store = join(d.dir, 'data');

    const cfgDir = mkdtempSync(join(tmpdir(), 'keyhold-migrate-'));
    dirs.push(cfgDir);
    const toPg = join(cfgDir, 'to-pg.hcl');
    writeFileSync(
      toPg,
      `storage_source "file" {\n  path = "${store}"\n}\nstorage_destination "postgresql" {\n  connection_url = "${pg.url}"\n}\n`,
    );
    // The source is in use by a running server: refused.
    const busy = await cli(['operator', 'migrate', '-config', toPg]);
    expect(busy.code).toBe(2);
    expect(busy.err).toMatch(/source: storage at .* is in use by another keyhold daemon/);
    expect(await d.stop()).toBe(0);

    const m1 = await cli(['operator', 'migrate', '-config', toPg]);
    expect(m1.err + m1.out).toMatch(/Success! All of the keys have been migrated/);
    expect(m1.code).toBe(0);
    // Into an initialised destination: refused.
    const again = await cli(['operator', 'migrate', '-config', toPg]);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/destination: storage is already initialised/);

    const back = join(cfgDir, 'back');
    const toFile = join(cfgDir, 'to-file.hcl');
    writeFileSync(
      toFile,
      `storage_source "postgresql" {\n  connection_url = "${pg.url}"\n}\nstorage_destination "file" {\n  path = "${back}"\n}\n`,
    );
    const m2 = await cli(['operator', 'migrate', '-config', toFile]);
    expect(m2.code, m2.err).toBe(0);
    const before = await records(store);
    const after = await records(back);
    expect(before.size).toBeGreaterThan(10);
    expect([...after.entries()].sort()).toEqual([...before.entries()].sort());

    // The PostgreSQL copy serves what the file store held.
    const node = await startNode('migrated', { url: pg.url, haEnabled: false });
    try {
      expect((await node.req('POST', 'sys/unseal', { key: recovery })).body.sealed).toBe(false);
      await until(async () => (await roleOf(node)) === 'active', 'the migrated node to serve');
      expect((await node.req('POST', 'transit/decrypt/mk', { ciphertext: ct }, as)).body.data.plaintext).toBe(
        'bWlncmF0ZQ==',
      );
      expect((await node.req('GET', 'transit/keys/mk', undefined, as)).body.data.latest_version).toBe(2);
      const kv = await node.req('GET', 'secret/data/app', undefined, as);
      expect(kv.body.data.data.v).toBe(2);
      expect(kv.body.data.metadata.version).toBe(2);
      expect((await node.req('GET', 'sys/sync/config', undefined, as)).body.data.queue_capacity).toBe(777);
      // A server refuses storage carrying a migration lock; -reset removes it.
      const lockCfg = join(cfgDir, 'lock.hcl');
      writeFileSync(lockCfg, `storage_source "file" {\n  path = "${back}"\n}\nstorage_destination "inmem" {}\n`);
      const fb = new FileBackend(back);
      fb.openSync();
      await fb.put('core/migration', Buffer.from(JSON.stringify({ start: '2026-01-01T00:00:00Z' })));
      await fb.close();
      const refused = await cli(
        ['server', '--storage-path', back, '--socket', join(cfgDir, 's.sock'), '--keychain', 'none'],
        { KEYHOLD_HOME: cfgDir },
      );
      expect(refused.code).toBe(1);
      expect(refused.err + refused.out).toMatch(/storage migration in progress \(started: 2026-01-01T00:00:00Z\)/);
      const locked = await cli(['operator', 'migrate', '-config', lockCfg]);
      expect(locked.code).toBe(2);
      expect(locked.err).toMatch(/storage migration in progress/);
      const reset = await cli(['operator', 'migrate', '-config', lockCfg, '-reset']);
      expect(reset.code).toBe(0);
      expect(reset.err + reset.out).toMatch(/Migration lock reset/);
    } finally {
      await node.stop();
      node.remove();
    }
  }, 120_000);

  it('names file, line and key of a bad migrate.hcl (exit 1)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keyhold-migrate-'));
    dirs.push(dir);
    const bad = join(dir, 'bad.hcl');
    writeFileSync(
      bad,
      'storage_source "file" {\n  path = "/x"\n}\nstorage_destination "postgresql" {\n  conection_url = "x"\n}\n',
    );
    const r = await cli(['operator', 'migrate', '-config', bad]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`config ${bad}:5: storage_destination.postgresql.conection_url: unknown key`);
  });
});
