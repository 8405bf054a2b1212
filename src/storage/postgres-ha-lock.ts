/**
 * The HA lock of the PostgreSQL backend (shared/reference/cluster-wire.md §1.5): one row of the lock
 * table (Vault's four columns plus `ha_epoch`, raised by every takeover, and `ha_pid`, the backend pid
 * of the holder's lock session), taken and renewed over a session of its own, and the standbys'
 * presence echoes. The store's fenced writes read `identity()`.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { LOCK_KEY, StorageUnavailableError, queryWithRetry, type PgShared } from './postgres-common.js';

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

/** The lock row and its session. */
export class PostgresHaLock {
  /** The identity written into the lock row while this node holds it. */
  private held: string | null = null;
  private lockClient: pg.Client | null = null;

  /** `ht`: the quoted lock table. */
  constructor(
    private readonly db: PgShared,
    private readonly ht: string,
    readonly lockTtlMs: number,
  ) {}

  /** The identity of the lock this node holds (its writes are fenced on it), or null. */
  identity(): string | null {
    return this.held;
  }

  /** The lock session (its pid is recorded in the lock row); reconnected when lost. */
  private async lockSession(): Promise<pg.Client> {
    if (this.lockClient) return this.lockClient;
    const c = new pg.Client({
      connectionString: this.db.url,
      connectionTimeoutMillis: 5000,
      application_name: `keyhold-lock ${this.db.tag}`,
    } as pg.ClientConfig);
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
    this.held = identity;
    return Number(r.rows[0]!.ha_epoch);
  }

  async renewLock(): Promise<boolean> {
    if (!this.held) return false;
    try {
      const c = await this.lockSession();
      // Renew only our own row and never re-insert (OpenBao PR #2100); the session must be the one
      // recorded, or a standby could already see us as gone.
      const r = await c.query(
        `UPDATE ${this.ht} SET valid_until = now() + $3::interval WHERE ha_key = $1 AND ha_identity = $2 AND valid_until > now() AND ha_pid = pg_backend_pid()`,
        [LOCK_KEY, this.held, `${this.lockTtlMs} milliseconds`],
      );
      if (r.rowCount === 1) return true;
    } catch {
      /* lost the session: the lock is lost too */
    }
    this.held = null;
    return false;
  }

  async releaseLock(): Promise<void> {
    const id = this.held;
    this.held = null;
    if (!id) return;
    try {
      await this.db.pool.query(`DELETE FROM ${this.ht} WHERE ha_key = $1 AND ha_identity = $2`, [LOCK_KEY, id]);
    } catch {
      /* the TTL frees it */
    }
  }

  /** Forget the lock locally (the HA loop decided it is lost). */
  dropLock(): void {
    this.held = null;
  }

  async lockHolder(): Promise<LockHolder | null> {
    const r = await queryWithRetry<{ ha_value: string; ha_epoch: string }>(
      this.db,
      `SELECT ha_value, ha_epoch FROM ${this.ht} h WHERE ha_key = $1 AND valid_until > now() AND (ha_pid IS NULL OR EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = h.ha_pid))`,
      [LOCK_KEY],
    );
    return r.rows.length ? { value: r.rows[0]!.ha_value, epoch: Number(r.rows[0]!.ha_epoch) } : null;
  }

  async echo(nodeId: string, info: Record<string, unknown>): Promise<void> {
    await queryWithRetry(
      this.db,
      `INSERT INTO ${this.ht} (ha_key, ha_identity, ha_value, valid_until) VALUES ($1, $2, $3, now())
       ON CONFLICT (ha_key) DO UPDATE SET ha_value = EXCLUDED.ha_value, valid_until = now()`,
      [`echo/${nodeId}`, nodeId, JSON.stringify(info)],
    );
  }

  async echoes(withinMs: number): Promise<Array<{ nodeId: string; lastEcho: Date; info: Record<string, unknown> }>> {
    const r = await queryWithRetry<{ ha_identity: string; valid_until: Date; ha_value: string }>(
      this.db,
      `SELECT ha_identity, valid_until, ha_value FROM ${this.ht} WHERE ha_key LIKE 'echo/%' AND valid_until > now() - $1::interval`,
      [`${withinMs} milliseconds`],
    );
    return r.rows.map((row) => ({
      nodeId: row.ha_identity,
      lastEcho: row.valid_until,
      info: JSON.parse(row.ha_value) as Record<string, unknown>,
    }));
  }

  /** End the lock session (after releaseLock). */
  async close(): Promise<void> {
    const lc = this.lockClient;
    this.lockClient = null;
    await lc?.end().catch(() => {});
  }
}
