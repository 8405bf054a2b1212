/**
 * The worker thread that owns one PKCS#11 library (one per `kms_library` stanza). Every native call
 * runs here, never on the daemon's event loop: setup calls (C_OpenSession, C_Login, C_FindObjects,
 * C_*Init) are synchronous in pkcs11js, RSA and EC data calls use its `*Async` forms so operations of
 * several keys overlap, and AES-GCM calls (microseconds) run synchronously in this thread. Native
 * errors are caught here and sent back as data.
 *
 * Facts (reference managed-keys-wire.md 4.5, 5.3): login is per process and per token and ends when
 * the token's last session closes, so each token keeps one persistent logged-in session; one
 * operation per session, so each key keeps a small pool of sessions (at most its max_parallel, which
 * the main thread enforces); SoftHSM2 forgets a token whose directory went away until the library is
 * finalized and initialized again, so on token-gone errors the worker re-initializes and retries once.
 */
import { requirePkcs11js } from '../../native/pkcs11js.js';
import { parentPort, workerData } from 'node:worker_threads';
import { decodeRequests, encodeResults, readRequest, type HotRequest } from './worker-frames.js';
import { ASLEEP, AWAKE, ByteRing, CTL, controlOf } from './worker-ring.js';
import type { GenerateSpec, KeyFacts, KeySpec, MechParams, WorkerBatch, WorkerError, WorkerMessage, WorkerReply, WorkerRequest, WorkerStats } from './worker-protocol.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type P11 = any;
type Handle = Buffer;

// PKCS#11 v2.40 constants (pkcs11t.h; reference 4.1/4.4).
const CKU_USER = 1;
const CKF_SERIAL_SESSION = 4;
const CKF_RW_SESSION = 2;
const CKF_OS_LOCKING_OK = 2;
const CKO_PUBLIC_KEY = 2;
const CKO_PRIVATE_KEY = 3;
const CKO_SECRET_KEY = 4;
const CKK_RSA = 0;
const CKK_EC = 3;
const CKK_AES = 0x1f;
const CKA = {
  CLASS: 0x0, TOKEN: 0x1, PRIVATE: 0x2, LABEL: 0x3, VALUE: 0x11, KEY_TYPE: 0x100, ID: 0x102, SENSITIVE: 0x103,
  ENCRYPT: 0x104, DECRYPT: 0x105, WRAP: 0x106, UNWRAP: 0x107, SIGN: 0x108, VERIFY: 0x10a, MODULUS: 0x120,
  MODULUS_BITS: 0x121, PUBLIC_EXPONENT: 0x122, VALUE_LEN: 0x161, EXTRACTABLE: 0x162, NEVER_EXTRACTABLE: 0x164,
  ALWAYS_SENSITIVE: 0x165, EC_PARAMS: 0x180, EC_POINT: 0x181,
} as const;
const CKM_RSA_PKCS_KEY_PAIR_GEN = 0x0;
const CKM_EC_KEY_PAIR_GEN = 0x1040;
const CKM_AES_KEY_GEN = 0x1080;
const CKS_RO_USER_FUNCTIONS = 1;
const CKS_RW_USER_FUNCTIONS = 3;
const CKR_USER_ALREADY_LOGGED_IN = 0x100;
const CKR_CRYPTOKI_ALREADY_INITIALIZED = 0x191;
/** Codes after which sessions, logins and handles are suspect: drop them, re-initialize, retry once. */
const TOKEN_GONE = new Set([0x05 /* GENERAL_ERROR */, 0x30 /* DEVICE_ERROR */, 0x32 /* DEVICE_REMOVED */, 0x60 /* KEY_HANDLE_INVALID */, 0x82 /* OBJECT_HANDLE_INVALID */, 0xb0 /* SESSION_CLOSED */, 0xb3 /* SESSION_HANDLE_INVALID */, 0xe0 /* TOKEN_NOT_PRESENT */, 0x101 /* USER_NOT_LOGGED_IN */, 0x190 /* CRYPTOKI_NOT_INITIALIZED */]);

/** A failure with a keyhold reason (sent to the main thread as data). */
class Refusal extends Error {
  constructor(readonly reason: string, message: string, readonly code?: number) {
    super(message);
  }
}

interface TokenState {
  slot: Handle;
  label: string;
  /** The persistent session that holds the login for the whole process. */
  loginSession: Handle;
  pin: string;
}

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

let p11: P11 | null = null;
let libraryPath = '';
const tokens = new Map<string, TokenState>();
const keys = new Map<string, KeyState>();
/** Specs by ref, so a key can be reopened after a re-initialization. */
const specs = new Map<string, { spec: KeySpec; generate?: GenerateSpec }>();
const stats: WorkerStats = { logins: 0, sessionsOpen: 0, reinitializations: 0, inFlight: 0, maxInFlight: 0, ringRequests: 0 };
let generation = 0;
let reinitializing: Promise<void> | null = null;
/** False after a C_Initialize failed (SoftHSM2 fails it while its token directory is missing). */
let initialized = false;

/** C_Initialize when the last attempt failed; a failure is a 503-class refusal, retried on the next call. */
function ensureInitialized(): void {
  if (initialized) return;
  try {
    lib().C_Initialize({ flags: CKF_OS_LOCKING_OK });
  } catch (e) {
    if (ckrOf(e) !== CKR_CRYPTOKI_ALREADY_INITIALIZED) throw new Refusal('token', `C_Initialize failed (${toError(e).name}); is the token available?`);
  }
  initialized = true;
}

function ckrOf(e: unknown): number | undefined {
  const c = (e as { code?: unknown })?.code;
  return typeof c === 'number' ? c : undefined;
}

function toError(e: unknown): WorkerError {
  if (e instanceof Refusal) return { name: e.reason, code: e.code, message: e.message };
  const code = ckrOf(e);
  const msg = String((e as Error)?.message ?? e);
  // pkcs11js puts the CKR name in `message`; method names the PKCS#11 function when known.
  const method = (e as { method?: string })?.method;
  if (code !== undefined) return { name: msg.split(/[\s:]/)[0] || 'CKR_UNKNOWN', code, message: method ? `${method}: ${msg}` : msg };
  return { name: 'binding', message: msg };
}

function load(path: string): void {
  if (p11 && libraryPath === path) return;
  let mod: any;
  try {
    mod = requirePkcs11js();
  } catch (e) {
    throw new Refusal('binding', `the PKCS#11 binding (npm package pkcs11js) is not installed or did not build: ${(e as Error).message.split('\n')[0]}`);
  }
  const p = new mod.PKCS11();
  try {
    p.load(path);
  } catch (e) {
    throw new Refusal('library', `cannot load PKCS#11 library ${path}: ${(e as Error).message.split('\n')[0]}`);
  }
  try {
    // OS locking: the *Async calls run on libuv's pool threads (reference 5.3).
    p.C_Initialize({ flags: CKF_OS_LOCKING_OK });
  } catch (e) {
    if (ckrOf(e) !== CKR_CRYPTOKI_ALREADY_INITIALIZED) throw e;
  }
  p11 = p;
  libraryPath = path;
  initialized = true;
}

function lib(): P11 {
  if (!p11) throw new Refusal('library', 'PKCS#11 library not loaded');
  return p11;
}

function findSlot(spec: KeySpec): { slot: Handle; label: string } {
  const p = lib();
  const slots: Handle[] = p.C_GetSlotList(true);
  for (const s of slots) {
    const id = s.readBigUInt64LE(0).toString();
    let label: string;
    try {
      label = String(p.C_GetTokenInfo(s).label).trim();
    } catch {
      continue;
    }
    if (spec.slot !== undefined ? id === spec.slot : label === spec.tokenLabel) return { slot: s, label };
  }
  const what = spec.slot !== undefined ? `slot ${spec.slot}` : `token label "${spec.tokenLabel}"`;
  throw new Refusal('token', `no token with ${what} is present in ${libraryPath}`);
}

function openToken(spec: KeySpec): TokenState {
  const { slot, label } = findSlot(spec);
  const k = slot.readBigUInt64LE(0).toString();
  const have = tokens.get(k);
  if (have) {
    // The login is shared by every key of the token: a key configured with another PIN must not ride on it.
    if (have.pin !== spec.pin) throw new Refusal('CKR_PIN_INCORRECT', `login to token "${have.label}" failed: CKR_PIN_INCORRECT (the PIN differs from the one the token is logged in with)`, 0xa0);
    return have;
  }
  const p = lib();
  const s: Handle = p.C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION);
  stats.sessionsOpen++;
  // One login per token per process: another key on the same token finds it logged in already.
  const state = p.C_GetSessionInfo(s).state as number;
  if (state !== CKS_RO_USER_FUNCTIONS && state !== CKS_RW_USER_FUNCTIONS) {
    try {
      p.C_Login(s, CKU_USER, spec.pin);
      stats.logins++;
    } catch (e) {
      if (ckrOf(e) !== CKR_USER_ALREADY_LOGGED_IN) {
        closeSession(s);
        const name = toError(e).name;
        throw new Refusal(name, `login to token "${label}" failed: ${name}`, ckrOf(e));
      }
    }
  }
  const t: TokenState = { slot, label, loginSession: s, pin: spec.pin };
  tokens.set(k, t);
  return t;
}

function closeSession(s: Handle): void {
  try {
    lib().C_CloseSession(s);
  } catch {
    /* already gone */
  }
  stats.sessionsOpen--;
}

function template(spec: KeySpec, cls: number): Array<{ type: number; value: unknown }> {
  const t: Array<{ type: number; value: unknown }> = [{ type: CKA.CLASS, value: cls }];
  if (spec.keyLabel) t.push({ type: CKA.LABEL, value: spec.keyLabel });
  if (spec.keyId) t.push({ type: CKA.ID, value: Buffer.from(spec.keyId) });
  return t;
}

function find(session: Handle, tpl: Array<{ type: number; value: unknown }>): Handle[] {
  const p = lib();
  p.C_FindObjectsInit(session, tpl);
  try {
    return p.C_FindObjects(session, 2);
  } finally {
    p.C_FindObjectsFinal(session);
  }
}

function attr(session: Handle, h: Handle, type: number): Buffer | undefined {
  try {
    return lib().C_GetAttributeValue(session, h, [{ type }])[0]?.value as Buffer | undefined;
  } catch {
    return undefined;
  }
}

function ulong(b: Buffer | undefined): number | undefined {
  if (!b || b.length === 0) return undefined;
  return b.length >= 8 ? Number(b.readBigUInt64LE(0)) : b.readUInt32LE(0);
}

/** Unwrap the DER OCTET STRING around CKA_EC_POINT (reference 4.3). */
function unwrapOctetString(b: Buffer): Buffer {
  if (b[0] !== 0x04 || b.length < 2) return b;
  let len = b[1]!;
  let off = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[2 + i]!;
    off = 2 + n;
  }
  return off + len === b.length ? b.subarray(off) : b;
}

function describe(session: Handle, key: Handle, pub: Handle | undefined, spec: KeySpec, generated: boolean): KeyFacts {
  const kt = ulong(attr(session, key, CKA.KEY_TYPE));
  const id = attr(session, key, CKA.ID) ?? Buffer.alloc(0);
  const label = attr(session, key, CKA.LABEL)?.toString('utf8') ?? spec.keyLabel ?? '';
  if (kt === CKK_AES) return { kind: 'aes', bits: (ulong(attr(session, key, CKA.VALUE_LEN)) ?? 0) * 8, id, label, generated };
  if (kt === CKK_RSA) {
    const src = pub ?? key;
    const modulus = attr(session, src, CKA.MODULUS);
    return { kind: 'rsa', bits: modulus ? modulus.length * 8 : undefined, modulus, publicExponent: attr(session, src, CKA.PUBLIC_EXPONENT), id, label, generated };
  }
  if (kt === CKK_EC) {
    const point = pub ? attr(session, pub, CKA.EC_POINT) : undefined;
    return { kind: 'ec', ecParams: attr(session, key, CKA.EC_PARAMS) ?? (pub ? attr(session, pub, CKA.EC_PARAMS) : undefined), ecPoint: point ? unwrapOctetString(point) : undefined, id, label, generated };
  }
  throw new Refusal('key', `key "${label}" has an unsupported key type ${kt}`);
}

function lookup(token: TokenState, spec: KeySpec): { key?: Handle; pub?: Handle } {
  const s = token.loginSession;
  const priv = find(s, template(spec, CKO_PRIVATE_KEY));
  const secret = priv.length ? [] : find(s, template(spec, CKO_SECRET_KEY));
  const hits = priv.length ? priv : secret;
  if (hits.length > 1) throw new Refusal('key', `more than one key matches label/id on token "${token.label}"; set key_id to pick one`);
  const key = hits[0];
  const pub = priv.length ? find(s, template(spec, CKO_PUBLIC_KEY))[0] : undefined;
  return { key, pub };
}

function destroyMatching(token: TokenState, spec: KeySpec): void {
  const s = token.loginSession;
  for (const cls of [CKO_PRIVATE_KEY, CKO_PUBLIC_KEY, CKO_SECRET_KEY]) for (const h of find(s, template(spec, cls))) lib().C_DestroyObject(s, h);
}

async function generate(token: TokenState, spec: KeySpec, g: GenerateSpec): Promise<{ key: Handle; pub?: Handle }> {
  const p = lib();
  const s = token.loginSession;
  const id = spec.keyId ? Buffer.from(spec.keyId) : randomId();
  const common = (cls: number): Array<{ type: number; value: unknown }> => [
    { type: CKA.CLASS, value: cls },
    { type: CKA.TOKEN, value: true },
    { type: CKA.ID, value: id },
    ...(spec.keyLabel ? [{ type: CKA.LABEL, value: spec.keyLabel }] : []),
  ];
  // Generated keys never leave the token: sensitive, not extractable, private (reference 3.2).
  const secretAttrs = [{ type: CKA.PRIVATE, value: true }, { type: CKA.SENSITIVE, value: true }, { type: CKA.EXTRACTABLE, value: false }];
  if (g.kind === 'aes') {
    const key: Handle = await p.C_GenerateKeyAsync(s, { mechanism: CKM_AES_KEY_GEN }, [
      ...common(CKO_SECRET_KEY), { type: CKA.KEY_TYPE, value: CKK_AES }, { type: CKA.VALUE_LEN, value: (g.bits ?? 256) / 8 }, ...secretAttrs,
      { type: CKA.ENCRYPT, value: true }, { type: CKA.DECRYPT, value: true }, { type: CKA.WRAP, value: true }, { type: CKA.UNWRAP, value: true },
    ]);
    return { key };
  }
  const pubTpl: Array<{ type: number; value: unknown }> = [...common(CKO_PUBLIC_KEY), { type: CKA.VERIFY, value: true }, { type: CKA.PRIVATE, value: false }];
  const privTpl: Array<{ type: number; value: unknown }> = [...common(CKO_PRIVATE_KEY), ...secretAttrs, { type: CKA.SIGN, value: true }];
  if (g.kind === 'rsa') {
    pubTpl.push({ type: CKA.KEY_TYPE, value: CKK_RSA }, { type: CKA.MODULUS_BITS, value: g.bits ?? 2048 }, { type: CKA.PUBLIC_EXPONENT, value: Buffer.from([1, 0, 1]) }, { type: CKA.ENCRYPT, value: true }, { type: CKA.WRAP, value: true });
    privTpl.push({ type: CKA.KEY_TYPE, value: CKK_RSA }, { type: CKA.DECRYPT, value: true }, { type: CKA.UNWRAP, value: true });
    const r = await p.C_GenerateKeyPairAsync(s, { mechanism: CKM_RSA_PKCS_KEY_PAIR_GEN }, pubTpl, privTpl);
    return { key: r.privateKey, pub: r.publicKey };
  }
  pubTpl.push({ type: CKA.KEY_TYPE, value: CKK_EC }, { type: CKA.EC_PARAMS, value: Buffer.from(g.ecParams ?? []) });
  privTpl.push({ type: CKA.KEY_TYPE, value: CKK_EC });
  const r = await p.C_GenerateKeyPairAsync(s, { mechanism: CKM_EC_KEY_PAIR_GEN }, pubTpl, privTpl);
  return { key: r.privateKey, pub: r.publicKey };
}

function randomId(): Buffer {
  const b = Buffer.alloc(4);
  lib().C_GenerateRandom([...tokens.values()][0]!.loginSession, b);
  return b;
}

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
    const what = [spec.keyLabel ? `label "${spec.keyLabel}"` : '', spec.keyId ? `id 0x${Buffer.from(spec.keyId).toString('hex')}` : ''].filter(Boolean).join(' and ');
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

function mechanismOf(mechanism: number, params: MechParams): unknown {
  switch (params.type) {
    case 'none':
      return { mechanism };
    case 'pss':
      return { mechanism, parameter: { type: 5 /* CK_PARAMS_RSA_PSS */, hashAlg: params.hashAlg, mgf: params.mgf, saltLen: params.saltLen } };
    case 'oaep':
      // CKZ_DATA_SPECIFIED = 1, no label (reference 5.3: `source` is required).
      return { mechanism, parameter: { type: 4 /* CK_PARAMS_RSA_OAEP */, hashAlg: params.hashAlg, mgf: params.mgf, source: 1 } };
    case 'gcm':
      // CK_PARAMS_GCM (v2.40 struct with ulIvBits set): the legacy form leaves ulIvBits uninitialised (reference 5.3).
      return { mechanism, parameter: { type: 25, iv: Buffer.from(params.iv), ivBits: params.iv.length * 8, aad: params.aad ? Buffer.from(params.aad) : undefined, tagBits: params.tagBits } };
  }
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
      p.C_EncryptInit(s, { mechanism: req.mechanism, parameter: { type: 25, iv, ivBits: ivLen * 8, aad, tagBits: params.tagBits } }, k.key);
      n = ivLen + (p.C_Encrypt(s, data, out.subarray(ivLen, ivLen + req.outLen)) as Buffer).length;
    } else {
      p.C_DecryptInit(s, { mechanism: req.mechanism, parameter: { type: 25, iv: buf(params.iv), ivBits: params.iv.length * 8, aad, tagBits: params.tagBits } }, k.key);
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
    // Let operations already on pool threads finish (they fail fast on a gone token).
    while (stats.inFlight > 0) await new Promise((r) => setTimeout(r, 5));
    if (gen !== generation) return;
    generation++;
    const p = lib();
    for (const [ref, k] of [...keys]) dropKey(ref, k);
    for (const t of tokens.values()) closeSession(t.loginSession);
    tokens.clear();
    try {
      p.C_Finalize();
    } catch {
      /* not initialised */
    }
    initialized = false;
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
          token: bool(CKA.TOKEN), private: bool(CKA.PRIVATE), sensitive: bool(CKA.SENSITIVE), extractable: bool(CKA.EXTRACTABLE),
          always_sensitive: bool(CKA.ALWAYS_SENSITIVE), never_extractable: bool(CKA.NEVER_EXTRACTABLE), value_readable: valueReadable,
          label: attr(s, k.key, CKA.LABEL)?.toString('utf8') ?? '', id: (attr(s, k.key, CKA.ID) ?? Buffer.alloc(0)).toString('hex'),
        };
      });
    case 'close': {
      const k = keys.get(req.ref);
      if (k) dropKey(req.ref, k);
      specs.delete(req.ref);
      return null;
    }
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
  if ((req.op === 'encrypt' || req.op === 'decrypt') && req.params.type === 'gcm' && initialized && !reinitializing) return keys.get(req.ref);
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
          settle(h, recoverFrom(h.ref, e, () => operate(h)));
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
const resultBytes = ringBuffer && results ? Buffer.from(ringBuffer, results.base, results.u8.byteLength) : Buffer.alloc(0);
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
  if (Atomics.load(ctl, CTL.MAIN_BELL) === 0 && Atomics.compareExchange(ctl, CTL.MAIN_BELL, 0, 1) === 0) parentPort!.postMessage(BELL);
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
  const max = (r.op === 'encrypt' ? r.params.type === 'gcm' && r.params.iv.length ? r.params.iv.length : 12 : 0) + r.outLen;
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
    settle(d, recoverFrom(d.ref, e, () => operate(d)));
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
