/**
 * The worker thread that owns one PKCS#11 library (one per `kms_library` stanza). Native calls run
 * here, not on the daemon's event loop (except the small AES-GCM calls of a token measured as fast,
 * which the main thread makes itself, inline-gcm.ts, behind a gate this worker closes before it
 * finalizes the module): setup calls (C_OpenSession, C_Login, C_FindObjects,
 * C_*Init) are synchronous in pkcs11js, RSA and EC data calls use its `*Async` forms so operations of
 * several keys overlap, and AES-GCM calls (microseconds) run synchronously in this thread. Native
 * errors are caught here and sent back as data.
 *
 * Facts (reference managed-keys-wire.md 4.5, 5.3): login is per process and per token and ends when
 * the token's last session closes, so each token keeps one persistent logged-in session; one
 * operation per session, so each key keeps a small pool of sessions (at most its max_parallel, which
 * the main thread enforces); SoftHSM2 forgets a token whose directory went away until the library is
 * finalized and initialized again, so on token-gone errors the worker re-initializes and retries once.
 *
 * The library and token layer (loading, logins, key objects) is pkcs11-token.ts; this file holds the
 * open keys, their session pools, the operations and the transport to the main thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { decodeRequests, encodeResults, readRequest, type HotRequest } from './worker-frames.js';
import { ASLEEP, AWAKE, ByteRing, CTL, controlOf } from './worker-ring.js';
import { closeInlineGate, measureInline, waitInlineIdle } from './worker-inline.js';
import { mechanismOf } from './worker-mechanism.js';
import type {
  GenerateSpec,
  InlineFacts,
  KeyFacts,
  KeySpec,
  MechParams,
  WorkerBatch,
  WorkerMessage,
  WorkerReply,
  WorkerRequest,
} from './worker-protocol.js';
import {
  CKA,
  CKF_RW_SESSION,
  CKF_SERIAL_SESSION,
  Refusal,
  TOKEN_GONE,
  attr,
  ckrOf,
  closeSession,
  describe,
  destroyMatching,
  ensureInitialized,
  finalizeLibrary,
  generate,
  lib,
  libraryInitialized,
  load,
  lookup,
  openToken,
  stats,
  toError,
  type Handle,
  type TokenState,
} from './pkcs11-token.js';

interface KeyState {
  /** The main thread's name for this key. */
  ref: string;
  spec: KeySpec;
  token: TokenState;
  /** Private key (RSA/EC) or secret key (AES). */
  key: Handle;
  publicKey?: Handle;
  facts: KeyFacts;
  idle: Handle[];
}

const keys = new Map<string, KeyState>();
/** Specs by ref, so a key can be reopened after a re-initialization. */
const specs = new Map<string, { spec: KeySpec; generate?: GenerateSpec }>();
let generation = 0;
let reinitializing: Promise<void> | null = null;

async function openKey(ref: string, spec: KeySpec, g?: GenerateSpec): Promise<KeyFacts> {
  const old = keys.get(ref);
  if (old) dropKey(ref, old);
  const token = openToken(spec);
  let { key, pub } = lookup(token, spec);
  let generated = false;
  if (g && (!key || g.replace)) {
    if (key && g.replace) destroyMatching(token, spec);
    ({ key, pub } = await generate(token, spec, g));
    generated = true;
  }
  if (!key) {
    const what = [
      spec.keyLabel ? `label "${spec.keyLabel}"` : '',
      spec.keyId ? `id 0x${Buffer.from(spec.keyId).toString('hex')}` : '',
    ]
      .filter(Boolean)
      .join(' and ');
    throw new Refusal('key', `no key with ${what} on token "${token.label}"`);
  }
  const facts = describe(token.loginSession, key, pub, spec, generated);
  keys.set(ref, { ref, spec, token, key, publicKey: pub, facts, idle: [] });
  specs.set(ref, { spec, generate: undefined });
  return facts;
}

function dropKey(ref: string, k: KeyState): void {
  for (const s of k.idle) closeSession(s);
  k.idle = [];
  keys.delete(ref);
}

function keyOf(ref: string): KeyState {
  const k = keys.get(ref);
  if (!k) throw new Refusal('key', 'managed key is not open');
  return k;
}

/** An idle session of the key's pool, or a new one (the main thread bounds how many are in use). */
function checkout(k: KeyState): Handle {
  let s = k.idle.pop();
  if (!s) {
    const flags = CKF_SERIAL_SESSION | (k.spec.forceRw ? CKF_RW_SESSION : 0);
    s = lib().C_OpenSession(k.token.slot, flags) as Handle;
    stats.sessionsOpen++;
  }
  stats.inFlight++;
  if (stats.inFlight > stats.maxInFlight) stats.maxInFlight = stats.inFlight;
  return s;
}

/** Return a session to its key's pool; a session whose operation failed may still hold it, so it is closed. */
function checkin(k: KeyState, s: Handle, healthy: boolean): void {
  stats.inFlight--;
  if (healthy && keys.get(k.ref) === k) k.idle.push(s);
  else closeSession(s);
}

async function withSession<T>(k: KeyState, fn: (s: Handle) => Promise<T>): Promise<T> {
  const s = checkout(k);
  let healthy = true;
  try {
    return await fn(s);
  } catch (e) {
    healthy = false;
    throw e;
  } finally {
    checkin(k, s, healthy);
  }
}

/**
 * AES-GCM encrypt or decrypt, synchronously in this thread: the calls take microseconds, so a hop to
 * libuv's pool (or a promise turn) would cost more than the work (bench managed-encrypt-aes-gcm).
 * Per request: C_GenerateRandom for the IV (unless the caller gave one), C_EncryptInit, C_Encrypt
 * (or C_DecryptInit, C_Decrypt) on one session of the key's pool.
 */
function gcmSync(k: KeyState, req: Extract<WorkerRequest, { op: 'encrypt' | 'decrypt' }>): Buffer {
  const p = req.params as Extract<MechParams, { type: 'gcm' }>;
  const out = Buffer.allocUnsafe((req.op === 'encrypt' ? p.iv.length || 12 : 0) + req.outLen);
  return out.subarray(0, gcmInto(k, req, out));
}

/**
 * gcmSync writing into `out` (at least IV length + outLen bytes; the result ring's memory on the
 * fast path, so the token writes the answer where the main thread reads it). Returns the length.
 */
function gcmInto(k: KeyState, req: Extract<WorkerRequest, { op: 'encrypt' | 'decrypt' }>, out: Buffer): number {
  const p = lib();
  const params = req.params as Extract<MechParams, { type: 'gcm' }>;
  const s = checkout(k);
  let healthy = false;
  try {
    const data = buf(req.data)!;
    const aad = buf(params.aad);
    let n: number;
    if (req.op === 'encrypt') {
      // iv || ct || tag in one buffer: the IV comes from the token's RNG (written in place) unless
      // the caller gave one.
      const ivLen = params.iv.length || 12;
      const iv = out.subarray(0, ivLen);
      if (params.iv.length) iv.set(params.iv);
      else p.C_GenerateRandom(s, iv);
      // CK_PARAMS_GCM (v2.40 struct with ulIvBits set): the legacy form leaves ulIvBits uninitialised (reference 5.3).
      p.C_EncryptInit(
        s,
        { mechanism: req.mechanism, parameter: { type: 25, iv, ivBits: ivLen * 8, aad, tagBits: params.tagBits } },
        k.key,
      );
      n = ivLen + (p.C_Encrypt(s, data, out.subarray(ivLen, ivLen + req.outLen)) as Buffer).length;
    } else {
      p.C_DecryptInit(
        s,
        {
          mechanism: req.mechanism,
          parameter: { type: 25, iv: buf(params.iv), ivBits: params.iv.length * 8, aad, tagBits: params.tagBits },
        },
        k.key,
      );
      n = (p.C_Decrypt(s, data, out.subarray(0, req.outLen)) as Buffer).length;
    }
    healthy = true;
    return n;
  } finally {
    checkin(k, s, healthy);
  }
}

async function operate(req: Extract<WorkerRequest, { op: 'sign' | 'encrypt' | 'decrypt' }>): Promise<Buffer> {
  const k = keyOf(req.ref);
  if (req.op !== 'sign' && req.params.type === 'gcm') return gcmSync(k, req);
  const p = lib();
  const mech = mechanismOf(req.mechanism, req.params);
  const data = Buffer.from(req.data);
  return withSession(k, async (s) => {
    const out = Buffer.alloc(req.outLen);
    if (req.op === 'sign') {
      p.C_SignInit(s, mech, k.key);
      return p.C_SignAsync(s, data, out);
    }
    if (req.op === 'encrypt') {
      p.C_EncryptInit(s, mech, k.publicKey && k.facts.kind === 'rsa' ? k.publicKey : k.key);
      return p.C_EncryptAsync(s, data, out);
    }
    // RSA and EC work takes milliseconds: it goes to libuv's pool so several keys' operations overlap.
    p.C_DecryptInit(s, mech, k.key);
    return p.C_DecryptAsync(s, data, out);
  });
}

/** Whether the token behind `k` still answers (a GENERAL_ERROR from a GCM tag check must not trigger recovery). */
function tokenAlive(k: KeyState): boolean {
  try {
    lib().C_GetTokenInfo(k.token.slot);
    lib().C_GetAttributeValue(k.token.loginSession, k.key, [{ type: CKA.CLASS }]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Drop every session, finalize and initialize the library again, then reopen the keys: SoftHSM2 (and
 * real HSMs after a connection loss) keep failing on old handles until then (reference 4.5).
 */
async function reinitialize(): Promise<void> {
  if (reinitializing) return reinitializing;
  const gen = generation;
  reinitializing = (async () => {
    // The main thread's same-thread calls (inline-gcm.ts) stop here: their handles die with C_Finalize.
    closeInlineGate(ctl);
    // Let operations already on pool threads finish (they fail fast on a gone token).
    while (stats.inFlight > 0) await new Promise((r) => setTimeout(r, 5));
    if (gen !== generation) return;
    waitInlineIdle(ctl);
    generation++;
    lib();
    for (const [ref, k] of [...keys]) dropKey(ref, k);
    finalizeLibrary();
    stats.reinitializations++;
    // May fail while the token is away; the next call tries again.
    try {
      ensureInitialized();
    } catch {
      /* retried by the next operation */
    }
  })().finally(() => {
    reinitializing = null;
  });
  return reinitializing;
}

/** Run an operation on a key; on token-gone errors re-initialize, reopen the key and retry once. */
async function withRecovery<T>(ref: string, fn: () => Promise<T>): Promise<T> {
  if (reinitializing) await reinitializing;
  ensureInitialized();
  try {
    if (!keys.has(ref)) await reopen(ref);
    return await fn();
  } catch (e) {
    return recoverFrom(ref, e, fn);
  }
}

/** After `e` failed an operation on `ref`: re-initialize, reopen and retry once when the token went away, else rethrow. */
async function recoverFrom<T>(ref: string, e: unknown, fn: () => Promise<T>): Promise<T> {
  if (!(await recoverable(e, keys.get(ref)))) throw e;
  await reinitialize();
  ensureInitialized();
  await reopen(ref);
  return fn();
}

let lastRescan = 0;

/**
 * Whether an error calls for re-initializing the module: a token-gone code while the token does not
 * answer, or a token that is not found (SoftHSM2 only sees a token directory that came back after
 * C_Initialize; rescans are at most one per 2 s so a misconfigured key cannot thrash the others).
 */
async function recoverable(e: unknown, k: KeyState | undefined): Promise<boolean> {
  if (e instanceof Refusal && e.reason === 'token') {
    if (Date.now() - lastRescan < 2000) return false;
    lastRescan = Date.now();
    return true;
  }
  const code = ckrOf(e);
  return code !== undefined && TOKEN_GONE.has(code) && !(k && tokenAlive(k));
}

/** What the main thread needs to call an AES-GCM key itself (worker-inline.ts); null for other keys. */
function inlineFacts(ref: string): InlineFacts | null {
  const k = keyOf(ref);
  if (k.facts.kind !== 'aes' || !ringBuffer) return null;
  const req = {
    id: 0,
    op: 'encrypt' as const,
    ref,
    mechanism: 0x1087 /* CKM_AES_GCM */,
    params: { type: 'gcm' as const, iv: new Uint8Array(0), tagBits: 128 },
    data: Buffer.alloc(64),
    outLen: 64 + 16,
  };
  // The gate opens for the current generation of the module (a re-initialization closes it).
  return measureInline(ctl, generation + 1, () => gcmSync(k, req), {
    slot: k.token.slot,
    key: k.key,
    forceRw: k.spec.forceRw,
  });
}

async function reopen(ref: string): Promise<void> {
  const s = specs.get(ref);
  if (!s) throw new Refusal('key', 'managed key is not open');
  if (!keys.has(ref)) await openKey(ref, s.spec);
}

async function handle(req: WorkerRequest): Promise<unknown> {
  switch (req.op) {
    case 'load':
      load(req.library);
      return null;
    case 'open':
      specs.set(req.ref, { spec: req.spec });
      if (reinitializing) await reinitializing;
      ensureInitialized();
      try {
        return await openKey(req.ref, req.spec, req.generate);
      } catch (e) {
        if (!(await recoverable(e, undefined))) throw e;
        await reinitialize();
        ensureInitialized();
        return openKey(req.ref, req.spec, req.generate);
      }
    case 'sign':
    case 'encrypt':
    case 'decrypt':
      return withRecovery(req.ref, () => operate(req));
    case 'random':
      return withRecovery(req.ref, async () => {
        const k = keyOf(req.ref);
        return lib().C_GenerateRandom(k.token.loginSession, Buffer.alloc(req.length));
      });
    case 'attributes':
      return withRecovery(req.ref, async () => {
        const k = keyOf(req.ref);
        const s = k.token.loginSession;
        const bool = (t: number) => {
          const v = attr(s, k.key, t);
          return v ? v[0] === 1 : null;
        };
        let valueReadable: boolean;
        try {
          lib().C_GetAttributeValue(s, k.key, [{ type: CKA.VALUE }]);
          valueReadable = true;
        } catch {
          valueReadable = false;
        }
        return {
          token: bool(CKA.TOKEN),
          private: bool(CKA.PRIVATE),
          sensitive: bool(CKA.SENSITIVE),
          extractable: bool(CKA.EXTRACTABLE),
          always_sensitive: bool(CKA.ALWAYS_SENSITIVE),
          never_extractable: bool(CKA.NEVER_EXTRACTABLE),
          value_readable: valueReadable,
          label: attr(s, k.key, CKA.LABEL)?.toString('utf8') ?? '',
          id: (attr(s, k.key, CKA.ID) ?? Buffer.alloc(0)).toString('hex'),
        };
      });
    case 'close': {
      const k = keys.get(req.ref);
      if (k) dropKey(req.ref, k);
      specs.delete(req.ref);
      return null;
    }
    case 'inline':
      return withRecovery(req.ref, async () => inlineFacts(req.ref));
    case 'stats':
      return { ...stats };
  }
}

// Calls that do not go through the shared rings (see pump below: other kinds of calls, frames too
// large for a ring, overflow) and every error travel as messages, in batches: under load a thread
// wake-up costs more than the AES-GCM call itself, so ops that arrive together travel together. Each batch from the main thread gets one
// message back as soon as its synchronous part is done (the replies so far and an acknowledgement:
// the main thread keeps at most two batches unacknowledged, so one waits here while another runs
// and the main thread parses the next requests meanwhile). Replies of work on libuv's pool (RSA,
// EC) follow in later messages, batched per turn of this thread's loop.
let outbox: WorkerReply[] = [];
let flushing = false;

function post(acks: number): void {
  const replies: WorkerReply[] = [];
  const bytes: Array<[number, Uint8Array]> = [];
  for (const r of outbox) {
    if (r.ok && r.result instanceof Uint8Array) bytes.push([r.id, r.result]);
    else replies.push(r);
  }
  outbox = [];
  const results = bytes.length ? encodeResults(bytes) : null;
  parentPort!.postMessage({ acks, replies, results } satisfies WorkerMessage, results ? [results] : []);
}

function reply(r: WorkerReply): void {
  outbox.push(r);
  if (flushing) return;
  flushing = true;
  setImmediate(() => {
    flushing = false;
    if (outbox.length) post(0);
  });
}

function settle(req: WorkerRequest, p: Promise<unknown>): void {
  p.then(
    (result) => reply({ id: req.id, ok: true, result }),
    (e) => reply({ id: req.id, ok: false, error: toError(e) }),
  );
}

/** A Buffer over a structured-clone Uint8Array (no copy): pkcs11js and Buffer methods want Buffers. */
function buf(u: Uint8Array | undefined): Buffer | undefined {
  return u && (Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength));
}

/** Whether a request can take the synchronous AES-GCM path now (an open key, no recovery running). */
function fastGcm(req: WorkerRequest): KeyState | undefined {
  if (
    (req.op === 'encrypt' || req.op === 'decrypt') &&
    req.params.type === 'gcm' &&
    libraryInitialized() &&
    !reinitializing
  )
    return keys.get(req.ref);
  return undefined;
}

function onBatch(m: WorkerBatch): void {
  try {
    const batch: WorkerRequest[] = m.frames ? decodeRequests(m.frames, m.refs) : [];
    for (const c of m.calls) batch.push(c);
    for (const req of batch) {
      // AES-GCM on an open key while no recovery runs: synchronously, no promise turns. A failure takes
      // the recovery path of every other operation (a gone token is re-initialized, then one retry).
      const k = fastGcm(req);
      if (k) {
        try {
          outbox.push({ id: req.id, ok: true, result: gcmSync(k, req as HotRequest & { op: 'encrypt' | 'decrypt' }) });
        } catch (e) {
          const h = req as HotRequest;
          settle(
            h,
            recoverFrom(h.ref, e, () => operate(h)),
          );
        }
        continue;
      }
      settle(req, handle(req));
    }
  } finally {
    // Always acknowledge: the main thread sends nothing more until this arrives.
    post(1);
  }
}

// The shared rings (worker-ring.ts): hot calls arrive in the request ring while this thread is awake,
// results go back through the result ring; messages only wake a sleeping side.
const ringBuffer = (workerData as { ring?: SharedArrayBuffer } | null)?.ring;
const ctl = ringBuffer ? controlOf(ringBuffer) : new Int32Array(8);
const requests = ringBuffer ? new ByteRing(ringBuffer, 'requests') : null;
const results = ringBuffer ? new ByteRing(ringBuffer, 'results') : null;
const resultBytes =
  ringBuffer && results ? Buffer.from(ringBuffer, results.base, results.u8.byteLength) : Buffer.alloc(0);
/** Key refs by the number the main thread gave them in the ring. */
const refNames = new Map<number, string>();
const refOf = (n: number): string => refNames.get(n) ?? '';
const BELL: WorkerMessage = { bell: true, acks: 0, replies: [], results: null };
/**
 * How long an idle worker keeps looking at the request ring before it sleeps: under a steady stream
 * the next request arrives within this window, and taking it costs nothing while a wake-up costs
 * both threads (tens of microseconds of CPU and ~80-100 us of latency on the bench VM).
 */
const SPIN_MS = 0.05;
/** Longest stretch of ring work before this thread's own event loop gets a turn (async replies, messages). */
const BUDGET_MS = 2;

/** Tell the main thread results wait, unless it said it will look anyway (CTL.MAIN_BELL = 1). */
function bellMain(): void {
  if (Atomics.load(ctl, CTL.MAIN_BELL) === 0 && Atomics.compareExchange(ctl, CTL.MAIN_BELL, 0, 1) === 0)
    parentPort!.postMessage(BELL);
}

/** Copy a request's byte fields out of the ring (for work that outlives the frame). */
function detach(r: HotRequest): HotRequest {
  const p = r.params;
  const params: MechParams = p.type === 'gcm' ? { ...p, iv: Buffer.from(p.iv), aad: p.aad && Buffer.from(p.aad) } : p;
  return { ...r, params, data: Buffer.from(r.data) } as HotRequest;
}

/** Run one request frame of the ring; its bytes are used before the frame is released. */
function runFrame(o: number, len: number): void {
  const q = requests!;
  if (q.view.getUint8(o + 4) === 0xff) {
    // A key's number: u32 0, u8 0xff, u32 number, ASCII ref.
    refNames.set(q.view.getUint32(o + 5, true), String.fromCharCode(...q.u8.subarray(o + 9, o + len)));
    return;
  }
  const [req] = readRequest(ringBuffer!, q.base, q.view, o, refOf);
  stats.ringRequests++;
  const k = fastGcm(req);
  if (!k) {
    settle(req, handle(detach(req)));
    return;
  }
  const r = req as HotRequest & { op: 'encrypt' | 'decrypt' };
  const max =
    (r.op === 'encrypt' ? (r.params.type === 'gcm' && r.params.iv.length ? r.params.iv.length : 12) : 0) + r.outLen;
  const at = results!.reserve(4 + max);
  try {
    if (at < 0) {
      // The result ring is full (the main thread is behind): answer by message.
      reply({ id: r.id, ok: true, result: gcmSync(k, r) });
      return;
    }
    const n = gcmInto(k, r, resultBytes.subarray(at + 4, at + 4 + max));
    results!.view.setUint32(at, r.id, true);
    results!.commit(4 + n);
    bellMain();
  } catch (e) {
    const d = detach(r);
    settle(
      d,
      recoverFrom(d.ref, e, () => operate(d)),
    );
  }
}

/** Take requests from the ring until it stays empty for SPIN_MS, then sleep (the main thread bells). */
function pump(): void {
  const q = requests;
  if (!q) return;
  Atomics.store(ctl, CTL.WORKER, AWAKE);
  const start = performance.now();
  for (;;) {
    const f = q.read();
    if (f) {
      try {
        runFrame(f[0], f[1]);
      } catch (e) {
        // Not the token's error (those are handled in runFrame): answer the call with it rather than
        // let the worker die with every other call.
        const id = q.view.getUint32(f[0], true);
        if (id) reply({ id, ok: false, error: toError(e) });
      } finally {
        q.release();
      }
      if (performance.now() - start > BUDGET_MS) {
        setImmediate(pump);
        return;
      }
      continue;
    }
    const until = performance.now() + SPIN_MS;
    while (!q.ready() && performance.now() < until);
    if (q.ready()) continue;
    Atomics.store(ctl, CTL.WORKER, ASLEEP);
    if (!q.ready()) return;
  }
}

parentPort!.on('message', (m: WorkerBatch) => {
  // Ring requests first: they were sent before this message.
  pump();
  if (!m.bell) onBatch(m);
});
