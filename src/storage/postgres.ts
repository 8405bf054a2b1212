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
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Backend } from './backend.js';

/** Thrown when the database cannot be reached (the router answers 503 `storage unavailable: ...`). */
export class StorageUnavailableError extends Error {
  readonly status = 503;
  constructor(message: string) {
    super(`storage unavailable: ${message}`);
    this.name = 'StorageUnavailableError';
  }
}

/** Thrown by a write on a node that does not hold the HA lock (fencing). */
export class NotActiveError extends Error {
  readonly status = 503;
  constructor(message = 'node is not active: lock has changed ownership before attempting write') {
    super(message);
    this.name = 'NotActiveError';
  }
}

/** Thrown at start for a bad parameter; the message names it. */
export class PostgresConfigError extends Error {}

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

/** What a lock holder looks like to others. */
export interface LockHolder {
  /** ha_value: the holder's node id. */
  value: string;
  epoch: number;
}

/** The HA part of a backend (design note §6: a small interface a backend may implement). */
export interface HaBackend {
  haEnabled(): boolean;
  /** Lock time to live (ms). */
  readonly lockTtlMs: number;
  /** Take the lock if free, expired or its holder's session is gone; returns the new epoch or null. */
  tryLock(value: string): Promise<number | null>;
  /** Extend our lock; false when it is no longer ours (step down at once). */
  renewLock(): Promise<boolean>;
  /** Give the lock up (step-down, shutdown). */
  releaseLock(): Promise<void>;
  /** The current holder, or null when nobody holds a valid lock. */
  lockHolder(): Promise<LockHolder | null>;
  /** Record a standby's presence (sys/ha-status). */
  echo(nodeId: string, info: Record<string, unknown>): Promise<void>;
  /** Nodes heard from within `withinMs`. */
  echoes(withinMs: number): Promise<Array<{ nodeId: string; lastEcho: Date; info: Record<string, unknown> }>>;
}

/** Change notifications: keys other nodes wrote, and a position for read-your-writes. */
export interface ChangeFeed {
  /** `onChange(key)` for every key another node wrote; `onReset()` when notifications may have been lost (drop all caches). */
  subscribe(onChange: (key: string) => void, onReset: () => void): () => void;
  /** Highest change sequence this node has written (0 before any write). */
  writtenIndex(): number;
  /** Resolve true once every change up to `seq` is applied here (waits at most `timeoutMs`). */
  waitForIndex(seq: number, timeoutMs: number): Promise<boolean>;
}

const DEFAULT_TABLE = 'vault_kv_store';
const DEFAULT_HA_TABLE = 'vault_ha_locks';
const LOCK_KEY = 'core/lock';

/** Split a key as Vault's backend does (§1.3): [parent_path, path, key]. */
export function splitKey(full: string): [string, string, string] {
  const pieces = full.split('/');
  const key = pieces[pieces.length - 1]!;
  if (pieces.length === 1) return ['', '/', key];
  if (pieces.length === 2) return ['/', `/${pieces[0]}/`, key];
  return [`/${pieces.slice(0, -2).join('/')}/`, `/${pieces.slice(0, -1).join('/')}/`, key];
}

function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/** True for errors that mean "the database is not reachable right now" (retry, then 503). */
function isConnectionError(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  const code = err?.code ?? '';
  if (['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'].includes(code)) return true;
  // SQLSTATE classes 08 (connection exception), 57P01-57P03 (shutdown, cannot connect now), 53300 (too many connections).
  if (/^08/.test(code) || /^57P0[1-3]$/.test(code) || code === '53300') return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(err?.message ?? '');
}

function durationMs(s: string, what: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(s);
  if (!m) throw new PostgresConfigError(`storage.postgresql.${what}: must be a duration such as "15s" or "500ms", got "${s}"`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

function weakTrue(s: string | undefined): boolean {
  return s !== undefined && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(s.trim());
}

/** A LISTEN/NOTIFY payload: `seq \t node \t key` or `sync \t node \t token`. */
interface Waiter {
  seq: number;
  resolve: (ok: boolean) => void;
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
  private readonly channel: string;
  /** This process (ignores its own notifications). */
  readonly nodeId = randomUUID();
  /** Suffix of our sessions' application_name (tells our sessions from other servers'). */
  private readonly tag = this.nodeId.slice(0, 8);
  private readonly listen: boolean;
  /** Our lock identity while we hold (or try to hold) the lock; writes are fenced with it. */
  private identity: string | null = null;
  /** Dedicated session for the lock, whose backend pid the lock row records. */
  private lockClient: pg.Client | null = null;
  private written = 0;
  // Change feed state.
  private listener: pg.Client | null = null;
  private listening = false;
  private closed = false;
  private readonly subscribers = new Set<{ onChange: (key: string) => void; onReset: () => void }>();
  private readonly seen = new Set<number>();
  private maxSeen = 0;
  private readonly waiters = new Set<Waiter>();
  private readonly syncs = new Map<string, () => void>();
  private catchUpTimer: NodeJS.Timeout | null = null;
  private catchUpFrom = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private readonly log: (msg: string, fields?: Record<string, unknown>) => void;

  constructor(params: PostgresParams, opts: { env?: NodeJS.ProcessEnv; log?: (msg: string, fields?: Record<string, unknown>) => void; listen?: boolean } = {}) {
    const env = opts.env ?? process.env;
    this.listen = opts.listen ?? true;
    this.log = opts.log ?? (() => {});
    // Vault: VAULT_PG_CONNECTION_URL, when set, replaces connection_url; keyhold's own name wins.
    const url = env.KEYHOLD_PG_CONNECTION_URL || env.VAULT_PG_CONNECTION_URL || params.connection_url || '';
    if (!url) throw new PostgresConfigError('storage.postgresql.connection_url: missing connection_url (or VAULT_PG_CONNECTION_URL / KEYHOLD_PG_CONNECTION_URL)');
    this.url = url;
    this.table = params.table || DEFAULT_TABLE;
    this.haTable = params.ha_table || DEFAULT_HA_TABLE;
    this.ha = weakTrue(params.ha_enabled);
    this.skipCreate = weakTrue(params.skip_create_table);
    this.lockTtlMs = params.ha_lock_ttl ? durationMs(params.ha_lock_ttl, 'ha_lock_ttl') : 15_000;
    if (this.lockTtlMs < 1000) throw new PostgresConfigError('storage.postgresql.ha_lock_ttl: must be at least 1s');
    const maxParallel = params.max_parallel ? Number(params.max_parallel) : 128;
    if (!Number.isSafeInteger(maxParallel) || maxParallel < 1) throw new PostgresConfigError(`storage.postgresql.max_parallel: must be a positive integer, got "${params.max_parallel}"`);
    const maxIdle = params.max_idle_connections ? Number(params.max_idle_connections) : undefined;
    if (maxIdle !== undefined && (!Number.isSafeInteger(maxIdle) || maxIdle < 0)) throw new PostgresConfigError(`storage.postgresql.max_idle_connections: failed parsing max_idle_connections parameter: "${params.max_idle_connections}"`);
    this.t = quoteIdent(this.table);
    this.ht = quoteIdent(this.haTable);
    this.ct = quoteIdent(`${this.table}_changes`);
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
      throw new PostgresConfigError(`storage.postgresql.connection_url: cannot connect to ${this.describe()}: ${(e as Error).message}`);
    }
    if (version < 100000) throw new PostgresConfigError(`storage.postgresql: PostgreSQL version must be at least 10 (server has ${version})`);
    if (!this.skipCreate) await this.createTables();
    else {
      try {
        await this.pool.query(`SELECT 1 FROM ${this.t} LIMIT 0`);
      } catch (e) {
        throw new PostgresConfigError(`storage.postgresql.table: table ${this.table} is not usable (skip_create_table is set): ${(e as Error).message}`);
      }
    }
    if (this.listen) await this.startListening();
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
        if (code !== '23505' && code !== '42P07') throw new PostgresConfigError(`storage.postgresql.table: cannot create tables: ${(e as Error).message}`);
      }
    }
  }

  /** Run a query with retries on connection loss; then StorageUnavailableError. */
  private async q<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    if (this.closed) throw new StorageUnavailableError('backend closed');
    let delay = 50;
    const deadline = Date.now() + 3000;
    for (;;) {
      try {
        return await this.pool.query<R>(sql, values);
      } catch (e) {
        if (!isConnectionError(e)) throw e;
        if (Date.now() + delay > deadline || this.closed) throw new StorageUnavailableError((e as Error).message || String((e as { code?: string }).code));
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 1000);
      }
    }
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
    if (fenced && !this.identity) throw new NotActiveError('node is not active: writes go to the active node');
    const values: unknown[] = [key, this.channel, this.nodeId, path, k];
    const param = (v: unknown) => `$${values.push(v)}`;
    const fence = fenced ? `SELECT 1 AS ok FROM ${this.ht} WHERE ha_key = '${LOCK_KEY}' AND ha_identity = ${param(this.identity)}::text AND valid_until > now() FOR SHARE` : `SELECT 1 AS ok`;
    const op =
      value === null
        ? `DELETE FROM ${this.t} WHERE path = $4::text AND key = $5::text AND EXISTS (SELECT 1 FROM fence) RETURNING 1`
        : `INSERT INTO ${this.t} (parent_path, path, key, value) SELECT ${param(parent)}::text, $4::text, $5::text, ${param(value)}::bytea FROM fence ON CONFLICT (path, key) DO UPDATE SET parent_path = EXCLUDED.parent_path, value = EXCLUDED.value RETURNING 1`;
    const sql = `WITH fence AS (${fence}), w AS (${op}), c AS (INSERT INTO ${this.ct} (key) SELECT $1::text FROM fence RETURNING seq)
      SELECT (SELECT count(*) FROM fence)::int AS fenced, (SELECT seq FROM c) AS seq, (SELECT pg_notify($2::text, seq::text || E'\\t' || $3::text || E'\\t' || $1::text) FROM c) AS n`;
    const r = await this.q<{ fenced: number; seq: string | null }>(sql, values);
    const row = r.rows[0]!;
    if (row.fenced !== 1) throw new NotActiveError();
    const seq = Number(row.seq);
    if (seq > this.written) this.written = seq;
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

  /** The lock session (its pid is recorded in the lock row); reconnected when lost. */
  private async lockSession(): Promise<pg.Client> {
    if (this.lockClient) return this.lockClient;
    const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5000, application_name: `keyhold-lock ${this.tag}` } as pg.ClientConfig);
    c.on('error', () => {
      if (this.lockClient === c) this.lockClient = null;
    });
    c.on('end', () => {
      if (this.lockClient === c) this.lockClient = null;
    });
    await c.connect();
    this.lockClient = c;
    return c;
  }

  async tryLock(value: string): Promise<number | null> {
    const identity = randomUUID();
    const ttl = `${this.lockTtlMs} milliseconds`;
    let c: pg.Client;
    try {
      c = await this.lockSession();
    } catch (e) {
      throw new StorageUnavailableError((e as Error).message);
    }
    // Take the row when it is absent, expired, or its holder's lock session has ended (a killed
    // process: PostgreSQL ends its session at once; a paused one keeps it and waits for the TTL).
    const r = await c.query<{ ha_epoch: string }>(
      `INSERT INTO ${this.ht} AS h (ha_key, ha_identity, ha_value, valid_until, ha_epoch, ha_pid)
       VALUES ($1, $2, $3, now() + $4::interval, 1, pg_backend_pid())
       ON CONFLICT (ha_key) DO UPDATE SET ha_identity = EXCLUDED.ha_identity, ha_value = EXCLUDED.ha_value,
         valid_until = EXCLUDED.valid_until, ha_epoch = h.ha_epoch + 1, ha_pid = EXCLUDED.ha_pid
       WHERE h.valid_until < now() OR h.ha_pid IS NULL OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = h.ha_pid)
       RETURNING ha_epoch`,
      [LOCK_KEY, identity, value, ttl],
    );
    if (r.rowCount !== 1) return null;
    this.identity = identity;
    return Number(r.rows[0]!.ha_epoch);
  }

  async renewLock(): Promise<boolean> {
    if (!this.identity) return false;
    try {
      const c = await this.lockSession();
      // Renew only our own row and never re-insert (OpenBao PR #2100); the session must be the one
      // recorded, or a standby could already see us as gone.
      const r = await c.query(`UPDATE ${this.ht} SET valid_until = now() + $3::interval WHERE ha_key = $1 AND ha_identity = $2 AND valid_until > now() AND ha_pid = pg_backend_pid()`, [
        LOCK_KEY,
        this.identity,
        `${this.lockTtlMs} milliseconds`,
      ]);
      if (r.rowCount === 1) return true;
    } catch {
      /* lost the session: the lock is lost too */
    }
    this.identity = null;
    return false;
  }

  async releaseLock(): Promise<void> {
    const id = this.identity;
    this.identity = null;
    if (!id) return;
    try {
      await this.pool.query(`DELETE FROM ${this.ht} WHERE ha_key = $1 AND ha_identity = $2`, [LOCK_KEY, id]);
    } catch {
      /* the TTL frees it */
    }
  }

  /** Forget the lock locally (the HA loop decided it is lost). */
  dropLock(): void {
    this.identity = null;
  }

  async lockHolder(): Promise<LockHolder | null> {
    const r = await this.q<{ ha_value: string; ha_epoch: string }>(
      `SELECT ha_value, ha_epoch FROM ${this.ht} h WHERE ha_key = $1 AND valid_until > now() AND (ha_pid IS NULL OR EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = h.ha_pid))`,
      [LOCK_KEY],
    );
    return r.rows.length ? { value: r.rows[0]!.ha_value, epoch: Number(r.rows[0]!.ha_epoch) } : null;
  }

  async echo(nodeId: string, info: Record<string, unknown>): Promise<void> {
    await this.q(
      `INSERT INTO ${this.ht} (ha_key, ha_identity, ha_value, valid_until) VALUES ($1, $2, $3, now())
       ON CONFLICT (ha_key) DO UPDATE SET ha_value = EXCLUDED.ha_value, valid_until = now()`,
      [`echo/${nodeId}`, nodeId, JSON.stringify(info)],
    );
  }

  async echoes(withinMs: number): Promise<Array<{ nodeId: string; lastEcho: Date; info: Record<string, unknown> }>> {
    const r = await this.q<{ ha_identity: string; valid_until: Date; ha_value: string }>(
      `SELECT ha_identity, valid_until, ha_value FROM ${this.ht} WHERE ha_key LIKE 'echo/%' AND valid_until > now() - $1::interval`,
      [`${withinMs} milliseconds`],
    );
    return r.rows.map((row) => ({ nodeId: row.ha_identity, lastEcho: row.valid_until, info: JSON.parse(row.ha_value) as Record<string, unknown> }));
  }

  // ---- change feed ----

  writtenIndex(): number {
    return this.written;
  }

  subscribe(onChange: (key: string) => void, onReset: () => void): () => void {
    const s = { onChange, onReset };
    this.subscribers.add(s);
    return () => this.subscribers.delete(s);
  }

  /** Backend.watch (the core's cache invalidation). */
  watch(onChange: (key: string) => void): () => void {
    return this.subscribe(onChange, () => onChange(''));
  }

  private async startListening(): Promise<void> {
    if (this.closed) return;
    const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5000, application_name: `keyhold-listen ${this.tag}` } as pg.ClientConfig);
    const lost = () => {
      if (this.listener !== c) return;
      this.listener = null;
      this.listening = false;
      if (!this.closed) this.scheduleReconnect();
    };
    c.on('error', lost);
    c.on('end', lost);
    c.on('notification', (m) => this.onNotification(m.payload ?? ''));
    try {
      await c.connect();
      await c.query(`LISTEN ${quoteIdent(this.channel)}`);
    } catch (e) {
      c.end().catch(() => {});
      if (this.listener === null && !this.closed) this.scheduleReconnect();
      throw e;
    }
    const wasListening = this.catchUpFrom > 0 || this.maxSeen > 0;
    this.listener = c;
    this.listening = true;
    // Anything may have changed while we were not listening: every cache starts over.
    if (wasListening) this.reset();
    const r = await this.pool.query<{ m: string | null }>(`SELECT max(seq) AS m FROM ${this.ct}`).catch(() => ({ rows: [{ m: null }] }));
    const top = Number(r.rows[0]?.m ?? 0);
    this.catchUpFrom = top;
    if (top > this.maxSeen) this.maxSeen = top;
    this.catchUpTimer ??= setInterval(() => void this.catchUp(), 2000).unref();
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer || this.closed) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.startListening().catch(() => this.scheduleReconnect());
    }, 250);
    this.reconnectTimer.unref();
  }

  private reset(): void {
    this.seen.clear();
    for (const s of this.subscribers) s.onReset();
    // Waiters: after a reset every cache is empty, so whatever they wait for is applied.
    for (const w of this.waiters) w.resolve(true);
    this.waiters.clear();
  }

  private onNotification(payload: string): void {
    const [a, node, rest] = payload.split('\t');
    if (a === 'sync') {
      if (node === this.nodeId) this.syncs.get(rest ?? '')?.();
      return;
    }
    const seq = Number(a);
    if (!Number.isFinite(seq)) return;
    this.apply(seq, node === this.nodeId ? null : (rest ?? ''));
  }

  private apply(seq: number, key: string | null): void {
    if (this.seen.has(seq)) return;
    this.seen.add(seq);
    if (this.seen.size > 200_000) {
      // Keep the newest half (older sequences are long applied).
      const keep = [...this.seen].sort((x, y) => x - y).slice(-100_000);
      this.seen.clear();
      for (const s of keep) this.seen.add(s);
    }
    if (seq > this.maxSeen) this.maxSeen = seq;
    if (key !== null) for (const s of this.subscribers) s.onChange(key);
    for (const w of this.waiters) {
      if (this.seen.has(w.seq)) {
        this.waiters.delete(w);
        w.resolve(true);
      }
    }
  }

  /**
   * Periodic catch-up: re-read the change log since a little before the last position, so a lost
   * notification heals within a few seconds (a write's statement finishes well within that window).
   */
  private async catchUp(): Promise<void> {
    if (!this.listening || this.closed) return;
    try {
      const from = Math.max(0, this.catchUpFrom - 1000);
      const r = await this.pool.query<{ seq: string; key: string }>(`SELECT seq, key FROM ${this.ct} WHERE seq > $1 ORDER BY seq`, [from]);
      let top = this.catchUpFrom;
      for (const row of r.rows) {
        const seq = Number(row.seq);
        if (seq > top) top = seq;
        // Our own writes are in the log too; invalidating them again is harmless but wasteful.
        if (!this.seen.has(seq)) this.apply(seq, row.key);
      }
      this.catchUpFrom = top;
      // The active trims the log (keeps ten minutes).
      if (this.identity) await this.pool.query(`DELETE FROM ${this.ct} WHERE at < now() - interval '10 minutes'`);
    } catch {
      /* next round */
    }
  }

  /**
   * Wait until the change `seq` (committed before this call) is applied here. Seen notifications
   * answer at once; otherwise a sync marker is sent: notifications arrive in commit order, so once
   * ours comes back every earlier commit has been delivered.
   */
  async waitForIndex(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.seen.has(seq) || seq <= 0) return true;
    if (!this.listening) return false;
    return new Promise<boolean>((resolve) => {
      let done = false;
      const finish = (ok: boolean) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.waiters.delete(w);
        this.syncs.delete(token);
        resolve(ok);
      };
      const w: Waiter = { seq, resolve: finish };
      this.waiters.add(w);
      const token = randomUUID();
      this.syncs.set(token, () => finish(true));
      const timer = setTimeout(() => finish(false), timeoutMs);
      this.pool.query(`SELECT pg_notify($1, $2)`, [this.channel, `sync\t${this.nodeId}\t${token}`]).catch(() => finish(false));
    });
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
    await this.releaseLock();
    this.closed = true;
    if (this.catchUpTimer) clearInterval(this.catchUpTimer);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    for (const w of this.waiters) w.resolve(false);
    this.waiters.clear();
    const l = this.listener;
    this.listener = null;
    await l?.end().catch(() => {});
    const lc = this.lockClient;
    this.lockClient = null;
    await lc?.end().catch(() => {});
    await this.pool.end().catch(() => {});
  }
}
