/**
 * Password hashes for the userpass method: bcrypt (Vault's builtin/credential/userpass stores
 * golang.org/x/crypto/bcrypt hashes at DefaultCost 10), from the `bcryptjs` package (pure JS, no
 * native build). Hashes are the standard `$2a$`/`$2b$` strings, so a hash Vault wrote
 * (`password_hash`) verifies here and the other way round.
 *
 * The work runs on a worker thread (password-worker.ts; inside the single executable, the embedded
 * script `password-worker.cjs`): bcryptjs's own async API still computes in 100 ms slices on the
 * calling thread, which would hold every other request of the daemon for that long. Where no
 * worker can start (the worker file absent, e.g. in a test run from the sources), it falls back to
 * bcryptjs's async API on this thread and says so once (a process warning on stderr).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import bcrypt from 'bcryptjs';
import { invalid } from '../framework/errors.js';
import { embeddedScript } from '../native/embedded-script.js';

type Job = { op: 'hash'; password: string; cost: number } | { op: 'compare'; password: string; hash: string };

/** A few bcrypt worker threads, started on first use; null once they proved unavailable. */
class BcryptPool {
  private workers: Worker[] | null = [];
  private next = 0;
  private seq = 0;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  private start(): Worker[] | null {
    if (this.workers === null || this.workers.length) return this.workers;
    const size = Math.min(4, Math.max(2, availableParallelism() - 1));
    try {
      const embedded = embeddedScript('password-worker.cjs');
      const url = new URL('./password-worker.js', import.meta.url);
      for (let i = 0; i < size; i++) {
        const w = embedded === null ? new Worker(url) : new Worker(embedded, { eval: true, name: 'bcrypt' });
        w.unref();
        w.on('message', (m: { id: number; result?: unknown; error?: string }) => {
          const p = this.pending.get(m.id);
          if (!p) return;
          this.pending.delete(m.id);
          if (m.error !== undefined) p.reject(new Error(m.error));
          else p.resolve(m.result);
        });
        w.on('error', () => this.fail());
        this.workers.push(w);
      }
    } catch {
      this.fail();
    }
    return this.workers;
  }

  /** Workers cannot run here: pending jobs are redone on this thread, later ones too. */
  private fail(): void {
    const ws = this.workers;
    if (ws !== null)
      process.emitWarning('bcrypt worker threads unavailable: password hashing runs on the event loop', {
        code: 'KEYHOLD_BCRYPT_INLINE',
      });
    this.workers = null;
    for (const w of ws ?? []) void w.terminate();
    for (const [, p] of this.pending) p.reject(new Error('bcrypt worker unavailable'));
    this.pending.clear();
  }

  async run<T>(job: Job): Promise<T> {
    const ws = this.start();
    if (ws?.length) {
      try {
        return await new Promise<T>((resolve, reject) => {
          const id = ++this.seq;
          this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
          ws[this.next++ % ws.length]!.postMessage({ id, ...job });
        });
      } catch (e) {
        if (this.workers !== null) throw e; // a bcrypt error, not a missing worker
      }
    }
    return (
      job.op === 'hash' ? bcrypt.hash(job.password, job.cost) : bcrypt.compare(job.password, job.hash)
    ) as Promise<T>;
  }
}

const pool = new BcryptPool();

/** Vault's bcrypt cost (golang.org/x/crypto/bcrypt DefaultCost). */
export const BCRYPT_COST = 10;

/** bcrypt reads at most 72 bytes of a password; Go's bcrypt refuses longer ones, and so do we. */
export const MAX_PASSWORD_BYTES = 72;

const HASH_RE = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;

/** A new bcrypt hash of `password` (400 naming "password" when it is empty or too long). */
export async function hashPassword(password: string, cost = BCRYPT_COST): Promise<string> {
  checkPassword(password);
  return pool.run<string>({ op: 'hash', password, cost });
}

/** Whether `password` matches `hash` (bcrypt's own comparison, which takes the same time for any mismatch). */
export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return pool.run<boolean>({ op: 'compare', password, hash });
}

/** Throws when `password` cannot be hashed as Vault would (empty, or past bcrypt's 72 bytes). */
export function checkPassword(password: string): void {
  if (password === '') throw invalid('password', 'must not be empty');
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES)
    throw invalid('password', `must be at most ${MAX_PASSWORD_BYTES} bytes (bcrypt reads no further)`);
}

/** True for a well-formed bcrypt hash with a cost between 4 and 31 (for `password_hash`). */
export function isBcryptHash(s: string): boolean {
  const m = HASH_RE.exec(s);
  if (!m) return false;
  const cost = Number(m[1]);
  return cost >= 4 && cost <= 31;
}
