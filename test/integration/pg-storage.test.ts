/**
 * The PostgreSQL backend against a real throwaway PostgreSQL (test/support/postgres.ts): Vault's
 * table layout and key split, index-backed LIST at 100,000 records, the HA lock (TTL, takeover
 * when the holder's session ends, renew never steals), write fencing, and the change feed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  NotActiveError,
  PostgresBackend,
  PostgresConfigError,
  StorageUnavailableError,
  splitKey,
} from '../../src/storage/postgres.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../support/postgres.js';

const skip = postgresUnavailable();
if (skip) console.warn(`skipping PostgreSQL tests: ${skip}`);

describe.skipIf(!!skip)('PostgreSQL backend', () => {
  let pg: TestPostgres;
  const open: PostgresBackend[] = [];
  const backend = async (params: Record<string, string> = {}, db = 'keyhold') => {
    const b = new PostgresBackend({ connection_url: pg.urlFor(db), ...params }, { env: {} });
    await b.open();
    open.push(b);
    return b;
  };
  beforeAll(() => {
    pg = startPostgres();
  });
  afterAll(async () => {
    for (const b of open) await b.close().catch(() => {});
    pg?.stop();
  });

  it("splits keys as Vault's backend does", () => {
    expect(splitKey('foo')).toEqual(['', '/', 'foo']);
    expect(splitKey('core/seal-config')).toEqual(['/', '/core/', 'seal-config']);
    expect(splitKey('logical/abc/metadata/app')).toEqual(['/logical/abc/', '/logical/abc/metadata/', 'app']);
  });

  it("stores rows in Vault's layout and answers get, put, delete and list", async () => {
    const b = await backend();
    await b.put('logical/abc/metadata/app', Buffer.from('v1'));
    await b.put('logical/abc/data', Buffer.from('v2'));
    await b.put('top', Buffer.from('v3'));
    await b.put('a%b/c_d', Buffer.from('v4'));
    expect((await b.get('logical/abc/metadata/app'))?.toString()).toBe('v1');
    expect(await b.get('logical/abc/missing')).toBeNull();
    expect(
      pg.psql(`SELECT parent_path || '|' || path || '|' || key FROM vault_kv_store WHERE key = 'app'`).trim(),
    ).toBe('/logical/abc/|/logical/abc/metadata/|app');
    expect(await b.list('')).toEqual(['a%b/', 'logical/', 'top']);
    expect(await b.list('logical/')).toEqual(['abc/']);
    expect(await b.list('logical/abc/')).toEqual(['data', 'metadata/']);
    expect(await b.list('a%b/')).toEqual(['c_d']);
    expect(await b.list('a_b/')).toEqual([]); // LIKE wildcards in a prefix are literal
    await b.delete('logical/abc/metadata/app');
    await b.delete('never/was');
    expect(await b.list('logical/abc/')).toEqual(['data']);
  });

  it('lists by prefix through the index at 100,000 records', async () => {
    pg.createDb('big');
    const b = await backend({}, 'big');
    pg.psql(
      `INSERT INTO vault_kv_store SELECT '/logical/m/', '/logical/m/k' || (i % 100) || '/', 'r' || i, 'x'::bytea FROM generate_series(1, 100000) i; ANALYZE vault_kv_store`,
      'big',
    );
    await b.put('logical/other/x', Buffer.from('y'));
    const t0 = performance.now();
    expect(await b.list('logical/other/')).toEqual(['x']);
    const ms = performance.now() - t0;
    const plan = pg.psql(
      `EXPLAIN SELECT key FROM vault_kv_store WHERE path = '/logical/other/' UNION SELECT DISTINCT substring(substr(path, 16) from '^[^/]*/') FROM vault_kv_store WHERE parent_path LIKE '/logical/other/%'`,
      'big',
    );
    expect(plan).not.toMatch(/Seq Scan/);
    expect(plan).toMatch(/Index/);
    expect(ms).toBeLessThan(2000); // a full scan of 100k rows would still pass; the plan is the real check
    expect((await b.list('logical/m/')).length).toBe(100);
  });

  it('names connection_url when the password or database is wrong', async () => {
    const bad = new PostgresBackend({ connection_url: pg.url.replace(pg.password, 'wrong') }, { env: {} });
    await expect(bad.open()).rejects.toThrow(
      /^storage\.postgresql\.connection_url: cannot connect .*password authentication failed/,
    );
    await bad.close();
    const nodb = new PostgresBackend({ connection_url: pg.urlFor('absent') }, { env: {} });
    await expect(nodb.open()).rejects.toThrow(PostgresConfigError);
    await nodb.close();
    expect(() => new PostgresBackend({}, { env: {} })).toThrow(/missing connection_url/);
    // VAULT_PG_CONNECTION_URL replaces connection_url.
    const viaEnv = new PostgresBackend(
      { connection_url: 'postgres://nobody@nowhere/x' },
      { env: { VAULT_PG_CONNECTION_URL: pg.url } },
    );
    await viaEnv.open();
    await viaEnv.close();
  });

  it('gives the lock to one node, hands it over when the holder session dies, and fences the loser', async () => {
    pg.createDb('ha');
    const params = { ha_enabled: 'true', ha_lock_ttl: '2s' };
    const a = await backend(params, 'ha');
    const b = await backend(params, 'ha');
    await expect(b.put('k', Buffer.from('standby'))).rejects.toThrow(NotActiveError);
    const ea = await a.tryLock('node-a');
    expect(ea).toBeGreaterThan(0);
    expect(await b.tryLock('node-b')).toBeNull();
    expect(await b.lockHolder()).toEqual({ value: 'node-a', epoch: ea });
    await a.put('k', Buffer.from('from a'));
    expect(await a.renewLock()).toBe(true);
    // The lock row expires (as for a paused active): b takes over, a's writes fail, a's renew fails.
    pg.psql(`UPDATE vault_ha_locks SET valid_until = now() - interval '1 second' WHERE ha_key = 'core/lock'`, 'ha');
    const eb = await b.tryLock('node-b');
    expect(eb).toBe(ea! + 1);
    await expect(a.put('k', Buffer.from('stale a'))).rejects.toThrow(/lock has changed ownership/);
    expect(await a.renewLock()).toBe(false);
    await b.put('k', Buffer.from('from b'));
    expect((await a.get('k'))?.toString()).toBe('from b');
    // b's lock session ends (a killed process): a takes the lock at once, well before the TTL.
    pg.psql(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'keyhold-lock%' AND pid = (SELECT ha_pid FROM vault_ha_locks WHERE ha_key = 'core/lock')`,
      'ha',
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(await a.tryLock('node-a')).toBe(eb! + 1);
  });

  it('notifies other nodes of changes in order and answers read-your-writes waits', async () => {
    pg.createDb('feed');
    const a = await backend({}, 'feed');
    const b = await backend({}, 'feed');
    const seen: string[] = [];
    b.subscribe(
      (k) => seen.push(k),
      () => seen.push('*reset*'),
    );
    const own: string[] = [];
    a.subscribe(
      (k) => own.push(k),
      () => {},
    );
    await a.put('x/1', Buffer.from('1'));
    await a.delete('x/1');
    const idx = a.writtenIndex();
    expect(idx).toBeGreaterThan(0);
    expect(await b.waitForIndex(idx, 2000)).toBe(true);
    expect(seen).toEqual(['x/1', 'x/1']);
    expect(own).toEqual([]); // a node's own writes are not echoed back
    // A change written behind the feed's back (a lost notification) heals through the catch-up.
    pg.psql(`INSERT INTO vault_kv_store_changes (key) VALUES ('healed/key')`, 'feed');
    await expect.poll(() => seen.includes('healed/key'), { timeout: 5000 }).toBe(true);
  });

  it('answers 503-kind errors while the database is down and recovers by itself', async () => {
    pg.createDb('outage');
    const b = await backend({}, 'outage');
    await b.put('k', Buffer.from('v'));
    pg.pause();
    try {
      await expect(b.get('k')).rejects.toThrow(StorageUnavailableError);
      await expect(b.get('k')).rejects.toThrow(/^storage unavailable: /);
    } finally {
      pg.resume();
    }
    await expect.poll(async () => (await b.get('k').catch(() => null))?.toString(), { timeout: 10_000 }).toBe('v');
  });
});
