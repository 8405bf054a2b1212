/**
 * The main thread's handle on one PKCS#11 library: a worker thread (pkcs11-worker.ts) that owns the
 * module, a request/reply channel (shared-memory rings for sign/encrypt/decrypt, worker-ring.ts;
 * messages for the rest), and the error boundary. A native error comes back as data and
 * becomes a 4xx/503 KeyholdError naming the reason; a worker that dies (a crashing module) fails its
 * pending calls with 503 and is started again on the next call, so the daemon keeps serving.
 */
import { existsSync, realpathSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { type KeyholdError, invalid, unavailable } from '../../framework/errors.js';
import { embeddedScript } from '../../native/embedded-script.js';
import type { Logger } from '../../framework/context.js';
import {
  decodeResults,
  encodeRequests,
  isHot,
  requestSize,
  writeRequest,
  type HotCall,
  type HotRequest,
} from './worker-frames.js';
import { ASLEEP, BELLED, ByteRing, CTL, MAX_RING_FRAME, controlOf, createRingBuffer } from './worker-ring.js';
import type { WorkerBatch, WorkerError, WorkerMessage, WorkerRequest, WorkerStats } from './worker-protocol.js';

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void; library: string };
/** A request without its id (the library numbers requests). */
type Request = WorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** CKR names that mean the request or the key's configuration is wrong (400), not that the HSM is unavailable. */
const CLIENT_CKR = new Set([
  'CKR_PIN_INCORRECT',
  'CKR_PIN_INVALID',
  'CKR_PIN_LEN_RANGE',
  'CKR_PIN_LOCKED',
  'CKR_PIN_EXPIRED',
  'CKR_ARGUMENTS_BAD',
  'CKR_MECHANISM_INVALID',
  'CKR_MECHANISM_PARAM_INVALID',
  'CKR_DATA_LEN_RANGE',
  'CKR_DATA_INVALID',
  'CKR_KEY_TYPE_INCONSISTENT',
  'CKR_KEY_FUNCTION_NOT_PERMITTED',
  'CKR_KEY_SIZE_RANGE',
  'CKR_ENCRYPTED_DATA_INVALID',
  'CKR_ENCRYPTED_DATA_LEN_RANGE',
  'CKR_TEMPLATE_INCONSISTENT',
  'CKR_TEMPLATE_INCOMPLETE',
  'CKR_ATTRIBUTE_VALUE_INVALID',
  'CKR_CURVE_NOT_SUPPORTED',
  'CKR_DOMAIN_PARAMS_INVALID',
  'CKR_SIGNATURE_INVALID',
  'CKR_SIGNATURE_LEN_RANGE',
  'key',
]);

/** The error a worker failure becomes (no PIN can be in it: the worker never puts one in a message). */
export function pkcs11Error(library: string, e: WorkerError): KeyholdError {
  const text = `pkcs11 library "${library}": ${e.message}`;
  return CLIENT_CKR.has(e.name) ? invalid(text) : unavailable(text);
}

/** Where the compiled worker lives (next to this file in dist/). */
function workerUrl(): URL {
  const js = new URL('./pkcs11-worker.js', import.meta.url);
  if (existsSync(js)) return js;
  // Running from TypeScript sources (vitest): use the build output instead.
  return new URL(import.meta.url.replace(/\/src\/kms\/pkcs11\/[^/]+$/, '/dist/kms/pkcs11/pkcs11-worker.js'));
}

/**
 * The worker of one PKCS#11 module, shared by every Pkcs11Library of the same module path in the
 * process: a module's state is per process (one C_Initialize, one login per token, and a
 * C_Finalize during recovery ends every session of it), so two workers on one module would undo
 * each other's sessions, and a key with a wrong PIN could ride on another worker's login.
 */
class ModuleChannel {
  private worker: Worker | null = null;
  private loaded: Promise<void> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  /** The current worker's shared rings (worker-ring.ts). */
  private ring: Ring | null = null;

  /** Pkcs11Library handles using this channel. */
  refs = 0;

  constructor(
    /** The first user's name (worker thread name, logs). */
    readonly name: string,
    readonly path: string,
    private readonly logger?: Logger,
  ) {}

  private start(): Worker {
    const sab = createRingBuffer();
    // Inside the single executable the worker's code is an embedded script, not a file.
    const embedded = embeddedScript('pkcs11-worker.cjs');
    const w =
      embedded === null
        ? new Worker(workerUrl(), { name: `pkcs11:${this.name}`, workerData: { ring: sab } })
        : new Worker(embedded, { eval: true, name: `pkcs11:${this.name}`, workerData: { ring: sab } });
    const ring: Ring = {
      ctl: controlOf(sab),
      requests: new ByteRing(sab, 'requests'),
      results: new ByteRing(sab, 'results'),
      refIds: new Map(),
      nextRef: 1,
    };
    ring.resultBytes = Buffer.from(sab, ring.results.base, ring.results.u8.byteLength);
    this.ring = ring;
    w.unref();
    w.on('message', (m: WorkerMessage) => {
      // A bell says results wait in the ring; clear it before reading so a later result rings again.
      if (m.bell) Atomics.store(ring.ctl, CTL.MAIN_BELL, 0);
      this.drainRing(ring);
      if (m.results) {
        decodeResults(m.results, (id, bytes) => {
          const p = this.pending.get(id);
          if (!p) return;
          this.pending.delete(id);
          p.resolve(bytes);
        });
      }
      for (const r of m.replies) {
        const p = this.pending.get(r.id);
        if (!p) continue;
        this.pending.delete(r.id);
        if (r.ok) p.resolve(r.result);
        else p.reject(pkcs11Error(p.library, r.error));
      }
      this.unacked -= m.acks;
      // The worker took in a batch: what queued meanwhile goes now, as one message.
      if (this.unacked < MAX_UNACKED && this.outbox.length) this.flush(w);
      if (this.pending.size === 0) w.unref();
    });
    const fail = (why: string) => {
      if (this.worker !== w) return;
      this.worker = null;
      this.ring = null;
      this.loaded = null;
      this.ready = false;
      this.outbox = [];
      this.unacked = 0;
      this.scheduled = false;
      for (const p of this.pending.values())
        p.reject(unavailable(`pkcs11 library "${p.library}": worker stopped (${why})`));
      this.pending.clear();
      if (!this.closed)
        this.logger?.error('pkcs11 worker stopped; it restarts on the next call', { library: this.name, reason: why });
    };
    w.on('error', (e) => fail(e.message));
    w.on('exit', (code) => fail(`exit code ${code}`));
    this.worker = w;
    return w;
  }

  private send(req: Request, library: string): Promise<unknown> {
    if (this.closed) return Promise.reject(unavailable(`pkcs11 library "${library}" is closed`));
    const w = this.worker ?? this.start();
    const id = this.nextId;
    // Ids travel as u32: wrap long before that.
    this.nextId = id >= 0x7fffffff ? 1 : id + 1;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, library });
      // Keep the thread alive only while calls are pending (the daemon's stop does not wait on it).
      if (this.pending.size === 1) w.ref();
      // Hot calls go through the shared ring when they fit; the rest (and overflow) by message.
      if (
        this.ring &&
        (req.op === 'encrypt' || req.op === 'decrypt' || req.op === 'sign') &&
        this.toRing(this.ring, req, id, w)
      )
        return;
      if (req.op === 'close') this.ring?.refIds.delete(req.ref);
      this.outbox.push({ ...req, id } as WorkerRequest);
      if (this.unacked < MAX_UNACKED && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          if (this.unacked < MAX_UNACKED) this.flush(w);
        });
      }
    });
  }

  /** Write a hot request into the ring and bell a sleeping worker; false when it does not fit. */
  private toRing(ring: Ring, r: HotCall, id: number, w: Worker): boolean {
    const size = requestSize(r);
    if (size > MAX_RING_FRAME) return false;
    const q = ring.requests;
    let ref = ring.refIds.get(r.ref);
    if (ref === undefined) {
      // First use of this key on the ring: tell the worker its number (u32 0, u8 0xff, u32 number, ASCII ref).
      const at = q.reserve(9 + r.ref.length);
      if (at < 0) return false;
      ref = ring.nextRef++;
      q.view.setUint32(at, 0, true);
      q.view.setUint8(at + 4, 0xff);
      q.view.setUint32(at + 5, ref, true);
      for (let i = 0; i < r.ref.length; i++) q.u8[at + 9 + i] = r.ref.charCodeAt(i) & 0x7f;
      q.commit(9 + r.ref.length);
      ring.refIds.set(r.ref, ref);
    }
    const at = q.reserve(size);
    if (at < 0) return false;
    writeRequest(q.view, q.u8, at, r, ref, id);
    q.commit(size);
    const c = ring.ctl;
    if (Atomics.load(c, CTL.WORKER) === ASLEEP && Atomics.compareExchange(c, CTL.WORKER, ASLEEP, BELLED) === ASLEEP)
      w.postMessage(BELL);
    this.awake(ring);
    return true;
  }

  /**
   * This thread is busy and will look at the result ring at the end of this loop turn: the worker
   * need not send a bell for results finished meanwhile (a message, and possibly a wake-up, each).
   */
  private awake(ring: Ring): void {
    if (ring.lookScheduled) return;
    ring.lookScheduled = true;
    Atomics.store(ring.ctl, CTL.MAIN_BELL, 1);
    setImmediate(() => {
      ring.lookScheduled = false;
      if (this.ring !== ring) return;
      this.drainRing(ring);
      // From here on this thread may sleep: results finished from now on come with a bell.
      Atomics.store(ring.ctl, CTL.MAIN_BELL, 0);
      this.drainRing(ring);
    });
  }

  /** Resolve the calls whose results wait in the ring (each result is copied out of the ring). */
  private drainRing(ring: Ring): void {
    const q = ring.results;
    if (!q.ready()) return;
    for (let f = q.read(); f; f = q.read()) {
      const [at, len] = f;
      const id = q.view.getUint32(at, true);
      const bytes = Buffer.allocUnsafe(len - 4);
      ring.resultBytes!.copy(bytes, 0, at + 4, at + len);
      q.release();
      const p = this.pending.get(id);
      if (!p) continue;
      this.pending.delete(id);
      p.resolve(bytes);
    }
    if (this.pending.size === 0) this.worker?.unref();
  }

  /**
   * Requests that do not go through the ring go to the worker in batches, at most MAX_UNACKED unacknowledged (see the worker's
   * batching note): the requests of one loop turn while there is room, else all that queued
   * meanwhile, sent when the worker acknowledges a batch.
   */
  private outbox: WorkerRequest[] = [];
  private unacked = 0;
  private scheduled = false;
  private flush(w: Worker): void {
    const batch = this.outbox;
    if (!batch.length || this.worker !== w) return;
    this.outbox = [];
    this.unacked++;
    const hot: HotRequest[] = [];
    const calls: WorkerRequest[] = [];
    for (const r of batch) (isHot(r) ? hot : calls).push(r);
    const refs: string[] = [];
    const frames = hot.length ? encodeRequests(hot, refs) : null;
    w.postMessage({ refs, frames, calls } satisfies WorkerBatch, frames ? [frames] : []);
  }

  /** Send a call, loading the module first (once per worker). */
  call<T>(req: Request, library: string): Promise<T> {
    // Loaded already: no extra promise turn per call.
    if (this.ready && this.worker) return this.send(req, library) as Promise<T>;
    return this.callAfterLoad<T>(req, library);
  }

  /** Whether the current worker has loaded the module. */
  private ready = false;

  private async callAfterLoad<T>(req: Request, library: string): Promise<T> {
    if (!this.loaded) {
      const l: Promise<void> = this.send({ op: 'load', library: this.path }, library).then(() => {
        if (this.loaded === l) this.ready = true;
      });
      this.loaded = l;
      l.catch(() => {
        if (this.loaded === l) this.loaded = null;
      });
    }
    await this.loaded;
    return (await this.send(req, library)) as T;
  }

  /** The current worker's shared control words (the same-thread path's gate, inline-gcm.ts), or null. */
  inlineControl(): Int32Array | null {
    return this.ring?.ctl ?? null;
  }

  /** Stop the worker. */
  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }
}

/**
 * Batches sent to a worker and not yet acknowledged: one being worked on and one waiting, so the
 * worker finds the next batch queued when it finishes instead of going to sleep and being woken
 * (a thread wake-up costs ~80-100 us on the 2-core bench VM; with one batch the AES-GCM case
 * measured ~10-20% fewer req/s on an idle machine, with three no better than two).
 */
const MAX_UNACKED = 2;
/** The main thread's side of a worker's rings. */
interface Ring {
  ctl: Int32Array;
  requests: ByteRing;
  results: ByteRing;
  resultBytes?: Buffer;
  /** Numbers of key refs already announced to the worker. */
  refIds: Map<string, number>;
  nextRef: number;
  /** A look at the result ring is scheduled for the end of this loop turn (see awake()). */
  lookScheduled?: boolean;
}
const BELL: WorkerBatch = { bell: true, refs: [], frames: null, calls: [] };
/** Channels by module path (a process-level resource: see ModuleChannel). */
const channels = new Map<string, ModuleChannel>();

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** A PKCS#11 library as a `kms_library` name sees it; libraries of the same module share one worker. */
export class Pkcs11Library {
  private readonly channel: ModuleChannel;
  private readonly key: string;
  private closed = false;

  constructor(
    /** The `kms_library` name (what managed keys refer to; named in errors). */
    readonly name: string,
    /** Path of the PKCS#11 module. */
    readonly path: string,
    logger?: Logger,
  ) {
    this.key = canonical(path);
    let c = channels.get(this.key);
    if (!c) {
      c = new ModuleChannel(name, path, logger);
      channels.set(this.key, c);
    }
    c.refs++;
    this.channel = c;
  }

  /** Send a call to the module's worker. */
  call<T>(req: Request): Promise<T> {
    if (this.closed) return Promise.reject(unavailable(`pkcs11 library "${this.name}" is closed`));
    return this.channel.call<T>(req, this.name);
  }

  /** Path of the module the shared worker loaded (the same-thread path loads the same one). */
  get modulePath(): string {
    return this.channel.path;
  }

  /** The worker's shared control words, or null while no worker runs (inline-gcm.ts). */
  inlineControl(): Int32Array | null {
    return this.closed ? null : this.channel.inlineControl();
  }

  /** Counters of the worker (logins, sessions, re-initializations). */
  stats(): Promise<WorkerStats> {
    return this.call<WorkerStats>({ op: 'stats' });
  }

  /** Release this handle; the worker stops with the last one. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (--this.channel.refs > 0) return;
    if (channels.get(this.key) === this.channel) channels.delete(this.key);
    await this.channel.close();
  }
}
