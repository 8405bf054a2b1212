/**
 * PostgreSQL backend (`storage "postgresql"`), with the HA lock and the change feed a cluster needs.
 *
 * Tables (shared/reference/cluster-wire.md §1.2-1.5): the data table has Vault's layout
 * (parent_path, path, key, value BYTEA; primary key (path, key); index on parent_path; COLLATE "C"),
 * so LIST by prefix is an index scan and the rows are those Vault/OpenBao would write. Values are
 * barrier ciphertext (a few seal records are plaintext, as in Vault). The lock table has Vault's
 * four columns plus `ha_epoch` (a counter raised by every takeover, our fencing token) and
 * `ha_pid` (the PostgreSQL backend pid of the holder's lock session, so a standby sees at once
 * that a killed active's session is gone instead of waiting for the TTL). A third table,
 * `<table>_changes`, logs (seq, key) of every write for the standbys' periodic catch-up.
 *
 * Writes by the active are fenced: each put/delete is one statement that first reads the lock row
 * FOR SHARE and only writes when the row still carries this node's identity and has not expired
 * (OpenBao's fence, PR #2100, done in the same statement instead of a separate check), so a deposed
 * active can never overwrite the new active's data. The same statement logs the change and sends
 * `NOTIFY` so standbys drop their caches; PostgreSQL delivers notifications at commit, in commit order.
 *
 * Connection loss: every operation is retried with exponential backoff (50 ms -> 1 s, ~3 s in all),
 * then fails with StorageUnavailableError (503 `storage unavailable: ...`).
 *
 * This file is the store; the HA lock is postgres-ha-lock.ts, the change feed postgres-change-feed.ts,
 * what the three share postgres-common.ts.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Backend } from './backend.js';
import { PostgresChangeFeed, type ChangeFeed } from './postgres-change-feed.js';
import {
  NotActiveError,
  PostgresConfigError,
  LOCK_KEY,
  queryWithRetry,
  quoteIdent,
  type PgShared,
} from './postgres-common.js';
import { PostgresHaLock, type HaBackend, type LockHolder } from './postgres-ha-lock.js';
import { readPostgresFormat, upgradePostgresFormat } from './format-version.js';

export { NotActiveError, PostgresConfigError, StorageUnavailableError } from './postgres-common.js';
export type { ChangeFeed } from './postgres-change-feed.js';
export type { HaBackend, LockHolder } from './postgres-ha-lock.js';

/** Parameters of the stanza (strings, as Vault passes them) plus the environment. */
export interface PostgresParams {
  connection_url?: string;
  table?: string;
  ha_table?: string;
  ha_enabled?: string;
  max_parallel?: string;
  max_idle_connections?: string;
  skip_create_table?: string;
  max_connect_retries?: string;
  ha_lock_ttl?: string;
}

const DEFAULT_TABLE = 'vault_kv_store';
const DEFAULT_HA_TABLE = 'vault_ha_locks';

/** Split a key as Vault's backend does (§1.3): [parent_path, path, key]. */
export function splitKey(full: string): [string, string, string] {
  const pieces = full.split('/');
  const key = pieces[pieces.length - 1]!;
  if (pieces.length === 1) return ['', '/', key];
  if (pieces.length === 2) return ['/', `/${pieces[0]}/`, key];
  return [`/${pieces.slice(0, -2).join('/')}/`, `/${pieces.slice(0, -1).join('/')}/`, key];
}

function durationMs(s: string, what: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(s);
  if (!m)
    throw new PostgresConfigError(
      `storage.postgresql.${what}: must be a duration such as "15s" or "500ms", got "${s}"`,
    );
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

function weakTrue(s: string | undefined): boolean {
  return s !== undefined && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(s.trim());
}

/** The PostgreSQL backend. */
export class PostgresBackend implements Backend, HaBackend, ChangeFeed {
  readonly table: string;
  readonly haTable: string;
  readonly lockTtlMs: number;
  private readonly ha: boolean;
  private readonly skipCreate: boolean;
  private readonly pool: pg.Pool;
  private readonly url: string;
  private readonly t: string;
  private readonly ht: string;
  private readonly ct: string;
  /** The storage format version table (format-version.ts). */
  private readonly ft: string;
  private readonly channel: string;
  /** This process (ignores its own notifications). */
  readonly nodeId = randomUUID();
  /** Suffix of our sessions' application_name (tells our sessions from other servers'). */
  private readonly tag = this.nodeId.slice(0, 8);
  private readonly listen: boolean;
  /** Our lock identity while we hold (or try to hold) the lock; writes are fenced with it. */
  private closed = false;
  private readonly log: (msg: string, fields?: Record<string, unknown>) => void;
  /** What the lock and the feed share with the store (the pool, this node, the closed flag). */
  private readonly db: PgShared;
  private readonly lock: PostgresHaLock;
  private readonly feed: PostgresChangeFeed;

  constructor(
    params: PostgresParams,
    opts: {
      env?: NodeJS.ProcessEnv;
      log?: (msg: string, fields?: Record<string, unknown>) => void;
      listen?: boolean;
    } = {},
  ) {
    const env = opts.env ?? process.env;
    this.listen = opts.listen ?? true;
    this.log = opts.log ?? (() => {});
    // Vault: VAULT_PG_CONNECTION_URL, when set, replaces connection_url; keyhold's own name wins.
    const url = env.KEYHOLD_PG_CONNECTION_URL || env.VAULT_PG_CONNECTION_URL || params.connection_url || '';
    if (!url)
      throw new PostgresConfigError(
        'storage.postgresql.connection_url: missing connection_url (or VAULT_PG_CONNECTION_URL / KEYHOLD_PG_CONNECTION_URL)',
      );
    this.url = url;
    this.table = params.table || DEFAULT_TABLE;
    this.haTable = params.ha_table || DEFAULT_HA_TABLE;
    this.ha = weakTrue(params.ha_enabled);
    this.skipCreate = weakTrue(params.skip_create_table);
    this.lockTtlMs = params.ha_lock_ttl ? durationMs(params.ha_lock_ttl, 'ha_lock_ttl') : 15_000;
    if (this.lockTtlMs < 1000) throw new PostgresConfigError('storage.postgresql.ha_lock_ttl: must be at least 1s');
    const maxParallel = params.max_parallel ? Number(params.max_parallel) : 128;
    if (!Number.isSafeInteger(maxParallel) || maxParallel < 1)
      throw new PostgresConfigError(
        `storage.postgresql.max_parallel: must be a positive integer, got "${params.max_parallel}"`,
      );
    const maxIdle = params.max_idle_connections ? Number(params.max_idle_connections) : undefined;
    if (maxIdle !== undefined && (!Number.isSafeInteger(maxIdle) || maxIdle < 0))
      throw new PostgresConfigError(
        `storage.postgresql.max_idle_connections: failed parsing max_idle_connections parameter: "${params.max_idle_connections}"`,
      );
    this.t = quoteIdent(this.table);
    this.ht = quoteIdent(this.haTable);
    this.ct = quoteIdent(`${this.table}_changes`);
    this.ft = quoteIdent(`${this.table}_format`);
    this.channel = `keyhold_${this.table}`.slice(0, 63);
    this.pool = new pg.Pool({
      connectionString: url,
      max: maxParallel,
      // node-postgres has no idle-count cap; idle connections beyond need close after 10 s.
      idleTimeoutMillis: maxIdle === 0 ? 1 : 10_000,
      connectionTimeoutMillis: 5_000,
      application_name: `keyhold ${this.tag}`,
    } as pg.PoolConfig);
    // A connection dropped while idle in the pool must not crash the process.
    this.pool.on('error', (e) => this.log('postgresql: idle connection lost', { error: e.message }));
    this.db = { pool: this.pool, url, nodeId: this.nodeId, tag: this.tag, closed: () => this.closed };
    this.lock = new PostgresHaLock(this.db, this.ht, this.lockTtlMs);
    this.feed = new PostgresChangeFeed(this.db, this.ct, this.channel, () => this.lock.identity() !== null);
  }

  /** A description of the database without the password. */
  /** Connection pool figures for telemetry (issue 27: PostgreSQL pool waits). */
  poolStats(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  describe(): string {
    try {
      const u = new URL(this.url);
      const host = u.searchParams.get('host') ?? u.host;
      return `postgresql:${host}${u.pathname}#${this.table}`;
    } catch {
      return `postgresql:${this.table}`;
    }
  }

  /**
   * Connect, check the server version, create tables (unless skip_create_table). A wrong URL,
   * password or database stops the server with one line naming connection_url.
   */
  async open(): Promise<void> {
    let version: number;
    try {
      const r = await this.pool.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`);
      version = Number(r.rows[0]!.v);
    } catch (e) {
      throw new PostgresConfigError(
        `storage.postgresql.connection_url: cannot connect to ${this.describe()}: ${(e as Error).message}`,
      );
    }
    if (version < 100000)
      throw new PostgresConfigError(
        `storage.postgresql: PostgreSQL version must be at least 10 (server has ${version})`,
      );
    // A store of a newer keyhold is refused before anything is created or written.
    const format = await readPostgresFormat((sql, v) => this.pool.query(sql, v), this.ft, `${this.table}_format`);
    if (!this.skipCreate) {
      await this.createTables();
      await upgradePostgresFormat((sql, v) => this.pool.query(sql, v), this.ft, format);
    } else {
      try {
        await this.pool.query(`SELECT 1 FROM ${this.t} LIMIT 0`);
      } catch (e) {
        throw new PostgresConfigError(
          `storage.postgresql.table: table ${this.table} is not usable (skip_create_table is set): ${(e as Error).message}`,
        );
      }
    }
    if (this.listen) await this.feed.startListening();
  }

  private async createTables(): Promise<void> {
    const ddl = [
      `CREATE TABLE IF NOT EXISTS ${this.t} (parent_path TEXT COLLATE "C" NOT NULL, path TEXT COLLATE "C", key TEXT COLLATE "C", value BYTEA, CONSTRAINT ${quoteIdent(`${this.table}_pkey`)} PRIMARY KEY (path, key))`,
      `CREATE INDEX IF NOT EXISTS ${quoteIdent(`${this.table}_idx`)} ON ${this.t} (parent_path)`,
      `CREATE TABLE IF NOT EXISTS ${this.ct} (seq BIGSERIAL PRIMARY KEY, key TEXT COLLATE "C" NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      `CREATE TABLE IF NOT EXISTS ${this.ht} (ha_key TEXT COLLATE "C" NOT NULL, ha_identity TEXT COLLATE "C" NOT NULL, ha_value TEXT COLLATE "C", valid_until TIMESTAMP WITH TIME ZONE NOT NULL, ha_epoch BIGINT NOT NULL DEFAULT 0, ha_pid INTEGER, CONSTRAINT ${quoteIdent(`${this.haTable}_pkey`)} PRIMARY KEY (ha_key))`,
    ];
    for (const sql of ddl) {
      try {
        await this.pool.query(sql);
      } catch (e) {
        // 23505: a peer created it concurrently (OpenBao tolerates the same); 42P07: relation exists.
        const code = (e as { code?: string }).code;
        if (code !== '23505' && code !== '42P07')
          throw new PostgresConfigError(`storage.postgresql.table: cannot create tables: ${(e as Error).message}`);
      }
    }
  }

  /** Run a query with retries on connection loss; then StorageUnavailableError. */
  private q<R extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    values: unknown[] = [],
  ): Promise<pg.QueryResult<R>> {
    return queryWithRetry<R>(this.db, sql, values);
  }

  async get(key: string): Promise<Buffer | null> {
    const [, path, k] = splitKey(key);
    const r = await this.q<{ value: Buffer }>(`SELECT value FROM ${this.t} WHERE path = $1 AND key = $2`, [path, k]);
    return r.rows.length ? r.rows[0]!.value : null;
  }

  /**
   * One statement: fence check (lock row FOR SHARE, still ours and unexpired), the write, the
   * change log row and the notification, all in one implicit transaction.
   */
  private async write(key: string, value: Buffer | null): Promise<void> {
    const [parent, path, k] = splitKey(key);
    const fenced = this.ha;
    const identity = this.lock.identity();
    if (fenced && !identity) throw new NotActiveError('node is not active: writes go to the active node');
    const values: unknown[] = [key, this.channel, this.nodeId, path, k];
    const param = (v: unknown) => `$${values.push(v)}`;
    const fence = fenced
      ? `SELECT 1 AS ok FROM ${this.ht} WHERE ha_key = '${LOCK_KEY}' AND ha_identity = ${param(identity)}::text AND valid_until > now() FOR SHARE`
      : `SELECT 1 AS ok`;
    const op =
      value === null
        ? `DELETE FROM ${this.t} WHERE path = $4::text AND key = $5::text AND EXISTS (SELECT 1 FROM fence) RETURNING 1`
        : `INSERT INTO ${this.t} (parent_path, path, key, value) SELECT ${param(parent)}::text, $4::text, $5::text, ${param(value)}::bytea FROM fence ON CONFLICT (path, key) DO UPDATE SET parent_path = EXCLUDED.parent_path, value = EXCLUDED.value RETURNING 1`;
    const sql = `WITH fence AS (${fence}), w AS (${op}), c AS (INSERT INTO ${this.ct} (key) SELECT $1::text FROM fence RETURNING seq)
      SELECT (SELECT count(*) FROM fence)::int AS fenced, (SELECT seq FROM c) AS seq, (SELECT pg_notify($2::text, seq::text || E'\\t' || $3::text || E'\\t' || $1::text) FROM c) AS n`;
    const r = await this.q<{ fenced: number; seq: string | null }>(sql, values);
    const row = r.rows[0]!;
    if (row.fenced !== 1) throw new NotActiveError();
    this.feed.noteWritten(Number(row.seq));
  }

  async put(key: string, value: Buffer): Promise<void> {
    await this.write(key, value);
  }

  async delete(key: string): Promise<void> {
    await this.write(key, null);
  }

  /**
   * Children of `prefix` (§1.4): leaf keys whose path is the prefix, plus the next folder of
   * every deeper row (parent_path LIKE prefix%, index range scan thanks to COLLATE "C").
   */
  async list(prefix: string): Promise<string[]> {
    const p = '/' + prefix;
    // Escape LIKE wildcards in the prefix (Vault does not; our keys may hold % or _).
    const like = p.replace(/[\\%_]/g, (c) => '\\' + c) + '%';
    const r = await this.q<{ k: string }>(
      `SELECT key AS k FROM ${this.t} WHERE path = $1
       UNION SELECT DISTINCT substring(substr(path, length($1) + 1) from '^[^/]*/') AS k FROM ${this.t} WHERE parent_path LIKE $2`,
      [p, like],
    );
    const out = r.rows.map((row) => row.k).filter((k): k is string => !!k);
    return [...new Set(out)].sort();
  }

  // ---- HA ----

  haEnabled(): boolean {
    return this.ha;
  }

  tryLock(value: string): Promise<number | null> {
    return this.lock.tryLock(value);
  }

  renewLock(): Promise<boolean> {
    return this.lock.renewLock();
  }

  releaseLock(): Promise<void> {
    return this.lock.releaseLock();
  }

  /** Forget the lock locally (the HA loop decided it is lost). */
  dropLock(): void {
    this.lock.dropLock();
  }

  lockHolder(): Promise<LockHolder | null> {
    return this.lock.lockHolder();
  }

  echo(nodeId: string, info: Record<string, unknown>): Promise<void> {
    return this.lock.echo(nodeId, info);
  }

  echoes(withinMs: number): Promise<Array<{ nodeId: string; lastEcho: Date; info: Record<string, unknown> }>> {
    return this.lock.echoes(withinMs);
  }

  // ---- change feed ----

  writtenIndex(): number {
    return this.feed.writtenIndex();
  }

  subscribe(onChange: (key: string) => void, onReset: () => void): () => void {
    return this.feed.subscribe(onChange, onReset);
  }

  /** Backend.watch (the core's cache invalidation). */
  watch(onChange: (key: string) => void): () => void {
    return this.subscribe(onChange, () => onChange(''));
  }

  /** Resolve true once every change up to `seq` is applied here (postgres-change-feed.ts). */
  waitForIndex(seq: number, timeoutMs: number): Promise<boolean> {
    return this.feed.waitForIndex(seq, timeoutMs);
  }

  /** Other keyhold sessions on this database (a running server: `operator migrate` refuses such a source). */
  async otherKeyholdSessions(): Promise<number> {
    const r = await this.q<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'keyhold%' AND application_name NOT LIKE $1`,
      ['%' + this.tag],
    );
    return r.rows[0]!.n;
  }

  /** Copy helper for migrations: every key (recursively), in sorted order. */
  async allKeys(): Promise<string[]> {
    const r = await this.q<{ path: string; key: string }>(`SELECT path, key FROM ${this.t} ORDER BY path, key`);
    return r.rows.map((row) => (row.path === '/' ? row.key : row.path.slice(1) + row.key)).sort();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.lock.releaseLock();
    this.closed = true;
    await this.feed.close();
    await this.lock.close();
    await this.pool.end().catch(() => {});
  }
}
