/**
 * What the PostgreSQL store (postgres.ts), its HA lock (postgres-ha-lock.ts) and its change feed
 * (postgres-change-feed.ts) share: the errors they raise, identifier quoting, and one pool whose
 * queries are retried on connection loss.
 */
import type pg from 'pg';

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

/** The key of the HA lock row (Vault's). */
export const LOCK_KEY = 'core/lock';

/** A quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/** True for errors that mean "the database is not reachable right now" (retry, then 503). */
export function isConnectionError(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  const code = err?.code ?? '';
  if (
    ['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'].includes(
      code,
    )
  )
    return true;
  // SQLSTATE classes 08 (connection exception), 57P01-57P03 (shutdown, cannot connect now), 53300 (too many connections).
  if (/^08/.test(code) || /^57P0[1-3]$/.test(code) || code === '53300') return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(
    err?.message ?? '',
  );
}

/** One database as the three parts see it. */
export interface PgShared {
  readonly pool: pg.Pool;
  /** The connection URL (the lock and the listener open sessions of their own). */
  readonly url: string;
  /** This node's id (change notifications carry it) and its short tag (application_name). */
  readonly nodeId: string;
  readonly tag: string;
  /** True once the backend is closed. */
  closed(): boolean;
}

/** Run a query with retries on connection loss (50 ms doubling to 1 s, ~3 s in all); then StorageUnavailableError. */
export async function queryWithRetry<R extends pg.QueryResultRow = pg.QueryResultRow>(
  db: PgShared,
  sql: string,
  values: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  if (db.closed()) throw new StorageUnavailableError('backend closed');
  let delay = 50;
  const deadline = Date.now() + 3000;
  for (;;) {
    try {
      return await db.pool.query<R>(sql, values);
    } catch (e) {
      if (!isConnectionError(e)) throw e;
      if (Date.now() + delay > deadline || db.closed())
        throw new StorageUnavailableError((e as Error).message || String((e as { code?: string }).code));
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 1000);
    }
  }
}
