/**
 * The change feed of the PostgreSQL backend: every write logs (seq, key) in `<table>_changes` and sends
 * a NOTIFY in the same statement (postgres.ts); this side LISTENs for other nodes' writes, tells the
 * subscribers which keys to drop from their caches, heals lost notifications by a periodic catch-up
 * over the change log, and answers read-your-writes waits (`waitForIndex`).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { quoteIdent, type PgShared } from './postgres-common.js';

/** Change notifications: keys other nodes wrote, and a position for read-your-writes. */
export interface ChangeFeed {
  /** `onChange(key)` for every key another node wrote; `onReset()` when notifications may have been lost (drop all caches). */
  subscribe(onChange: (key: string) => void, onReset: () => void): () => void;
  /** Highest change sequence this node has written (0 before any write). */
  writtenIndex(): number;
  /** Resolve true once every change up to `seq` is applied here (waits at most `timeoutMs`). */
  waitForIndex(seq: number, timeoutMs: number): Promise<boolean>;
}

/** A `waitForIndex` caller, waiting for one sequence. */
interface Waiter {
  seq: number;
  resolve: (ok: boolean) => void;
}

/** The LISTEN session, the applied sequences and the waiters. NOTIFY payloads: `seq \t node \t key` or `sync \t node \t token`. */
export class PostgresChangeFeed implements ChangeFeed {
  private written = 0;
  private listener: pg.Client | null = null;
  private listening = false;
  private readonly subscribers = new Set<{ onChange: (key: string) => void; onReset: () => void }>();
  private readonly seen = new Set<number>();
  private maxSeen = 0;
  private readonly waiters = new Set<Waiter>();
  private readonly syncs = new Map<string, () => void>();
  private catchUpTimer: NodeJS.Timeout | null = null;
  private catchUpFrom = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;

  /**
   * `ct`: the quoted change-log table; `channel`: the NOTIFY channel; `trims()`: true while this node
   * is active (the active trims the log).
   */
  constructor(
    private readonly db: PgShared,
    private readonly ct: string,
    private readonly channel: string,
    private readonly trims: () => boolean,
  ) {}

  writtenIndex(): number {
    return this.written;
  }

  /** This node committed change `seq` (its own write). */
  noteWritten(seq: number): void {
    if (seq > this.written) this.written = seq;
  }

  subscribe(onChange: (key: string) => void, onReset: () => void): () => void {
    const s = { onChange, onReset };
    this.subscribers.add(s);
    return () => this.subscribers.delete(s);
  }

  /** LISTEN on the channel (again after a lost session, with every cache reset), and start the catch-up timer. */
  async startListening(): Promise<void> {
    if (this.db.closed()) return;
    const c = new pg.Client({
      connectionString: this.db.url,
      connectionTimeoutMillis: 5000,
      application_name: `keyhold-listen ${this.db.tag}`,
    } as pg.ClientConfig);
    const lost = () => {
      if (this.listener !== c) return;
      this.listener = null;
      this.listening = false;
      if (!this.db.closed()) this.scheduleReconnect();
    };
    c.on('error', lost);
    c.on('end', lost);
    c.on('notification', (m) => this.onNotification(m.payload ?? ''));
    try {
      await c.connect();
      await c.query(`LISTEN ${quoteIdent(this.channel)}`);
    } catch (e) {
      c.end().catch(() => {});
      if (this.listener === null && !this.db.closed()) this.scheduleReconnect();
      throw e;
    }
    const wasListening = this.catchUpFrom > 0 || this.maxSeen > 0;
    this.listener = c;
    this.listening = true;
    // Anything may have changed while we were not listening: every cache starts over.
    if (wasListening) this.reset();
    const r = await this.db.pool
      .query<{ m: string | null }>(`SELECT max(seq) AS m FROM ${this.ct}`)
      .catch(() => ({ rows: [{ m: null }] }));
    const top = Number(r.rows[0]?.m ?? 0);
    this.catchUpFrom = top;
    if (top > this.maxSeen) this.maxSeen = top;
    this.catchUpTimer ??= setInterval(() => void this.catchUp(), 2000).unref();
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer || this.db.closed()) return;
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
      if (node === this.db.nodeId) this.syncs.get(rest ?? '')?.();
      return;
    }
    const seq = Number(a);
    if (!Number.isFinite(seq)) return;
    this.apply(seq, node === this.db.nodeId ? null : (rest ?? ''));
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
    if (!this.listening || this.db.closed()) return;
    try {
      const from = Math.max(0, this.catchUpFrom - 1000);
      const r = await this.db.pool.query<{ seq: string; key: string }>(
        `SELECT seq, key FROM ${this.ct} WHERE seq > $1 ORDER BY seq`,
        [from],
      );
      let top = this.catchUpFrom;
      for (const row of r.rows) {
        const seq = Number(row.seq);
        if (seq > top) top = seq;
        // Our own writes are in the log too; invalidating them again is harmless but wasteful.
        if (!this.seen.has(seq)) this.apply(seq, row.key);
      }
      this.catchUpFrom = top;
      // The active trims the log (keeps ten minutes).
      if (this.trims()) await this.db.pool.query(`DELETE FROM ${this.ct} WHERE at < now() - interval '10 minutes'`);
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
      this.db.pool
        .query(`SELECT pg_notify($1, $2)`, [this.channel, `sync\t${this.db.nodeId}\t${token}`])
        .catch(() => finish(false));
    });
  }

  /** Stop the timers, fail the waiters, end the LISTEN session (the backend is closed). */
  async close(): Promise<void> {
    if (this.catchUpTimer) clearInterval(this.catchUpTimer);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    for (const w of this.waiters) w.resolve(false);
    this.waiters.clear();
    const l = this.listener;
    this.listener = null;
    await l?.end().catch(() => {});
  }
}
