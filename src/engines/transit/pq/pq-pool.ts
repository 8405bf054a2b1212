/**
 * A small pool of worker threads running @noble/post-quantum, so ML-DSA and SLH-DSA signatures (a few
 * milliseconds each in JS) neither block the event loop nor stay on one core: batches use every core,
 * as node:crypto's thread pool does for the classical types. One pool per process, started on first
 * use, threads unref'd (they never keep the daemon alive). KEYHOLD_PQ_THREADS=0 keeps the work on the
 * calling thread; the default is the machine's parallelism, at most 4.
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';

/** One signature job. `internal` hands a ready M' to the internal interface (pre-hash, composite). */
export interface PqJob {
  family: 'ml-dsa' | 'slh-dsa';
  /** "44" | "65" | "87", or an SLH-DSA set name such as "slh-dsa-sha2-128s". */
  set: string;
  op: 'sign' | 'verify' | 'keygen';
  internal: boolean;
  key: Uint8Array;
  msg: Uint8Array;
  sig?: Uint8Array;
  context?: Uint8Array;
}

const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
Promise.all([import(workerData.ml), import(workerData.slh)]).then(([ml, slh]) => {
  const pick = (j) => j.family === 'ml-dsa' ? ml['ml_dsa' + j.set] : slh[j.set.replace(/-/g, '_')];
  parentPort.on('message', (j) => {
    try {
      const alg = pick(j);
      const impl = j.internal ? alg.internal : alg;
      const opts = j.context ? { context: j.context } : undefined;
      const out = j.op === 'keygen' ? alg.keygen(j.key).secretKey : j.op === 'sign' ? impl.sign(j.msg, j.key, opts) : impl.verify(j.sig, j.msg, j.key, opts);
      parentPort.postMessage({ id: j.id, out });
    } catch (e) {
      parentPort.postMessage({ id: j.id, error: String((e && e.message) || e) });
    }
  });
});
`;

interface Pending {
  resolve: (v: Uint8Array | boolean) => void;
  reject: (e: Error) => void;
}

class PqPool {
  private workers: Worker[] = [];
  private starting: Promise<void> | null = null;
  private next = 0;
  private id = 0;
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly size: number) {}

  private start(): Promise<void> {
    this.starting ??= (async () => {
      const { Worker } = await import('node:worker_threads');
      const req = createRequire(import.meta.url);
      const workerData = {
        ml: pathToFileURL(req.resolve('@noble/post-quantum/ml-dsa.js')).href,
        slh: pathToFileURL(req.resolve('@noble/post-quantum/slh-dsa.js')).href,
      };
      for (let i = 0; i < this.size; i++) {
        const w = new Worker(SOURCE, { eval: true, workerData, name: `transit-pq-${i}` });
        w.unref();
        w.on('message', (m: { id: number; out?: Uint8Array | boolean; error?: string }) => {
          const p = this.pending.get(m.id);
          if (!p) return;
          this.pending.delete(m.id);
          if (m.error !== undefined) p.reject(new Error(m.error));
          else p.resolve(m.out!);
        });
        w.on('error', (e) => {
          for (const p of this.pending.values()) p.reject(e);
          this.pending.clear();
          this.workers = [];
          this.starting = null;
        });
        this.workers.push(w);
      }
    })();
    return this.starting;
  }

  async run(job: PqJob): Promise<Uint8Array | boolean> {
    await this.start();
    const w = this.workers[this.next++ % this.workers.length]!;
    const id = ++this.id;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      w.postMessage({ ...job, id });
    });
  }
}

let pool: PqPool | null | undefined;

/** The process's pool, or null when KEYHOLD_PQ_THREADS=0. */
function thePool(): PqPool | null {
  if (pool === undefined) {
    const env = process.env.KEYHOLD_PQ_THREADS;
    const n = env !== undefined && env !== '' ? Number(env) : Math.min(4, availableParallelism());
    pool = Number.isInteger(n) && n > 0 ? new PqPool(n) : null;
  }
  return pool;
}

/** Sign on the pool (null when there is no pool: the caller signs inline). */
export function poolSign(job: Omit<PqJob, 'op' | 'sig'>): Promise<Buffer> | null {
  const p = thePool();
  return p ? p.run({ ...job, op: 'sign' }).then((out) => Buffer.from(out as Uint8Array)) : null;
}

/** Verify on the pool (null when there is no pool); a throwing verification is false. */
export function poolVerify(job: Omit<PqJob, 'op'>): Promise<boolean> | null {
  const p = thePool();
  return p
    ? p.run({ ...job, op: 'verify' }).then(
        (out) => out === true,
        () => false,
      )
    : null;
}

/** An SLH-DSA secret key from its 3n-byte seed on the pool (key generation of the "s" sets takes seconds); null without a pool. */
export function poolSlhKeygen(set: string, seed: Uint8Array): Promise<Buffer> | null {
  const p = thePool();
  return p
    ? p
        .run({ family: 'slh-dsa', set, op: 'keygen', internal: false, key: seed, msg: new Uint8Array(0) })
        .then((out) => Buffer.from(out as Uint8Array))
    : null;
}
