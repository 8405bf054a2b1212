/**
 * The PKCS#11 library and its tokens, as the key worker (pkcs11-worker.ts) uses them: loading and
 * (re)initializing the module, one logged-in session per token, finding, describing and generating
 * key objects. Runs in the worker thread only; native errors become Refusals or WorkerErrors.
 */
import { requirePkcs11js } from '../../native/pkcs11js.js';
import type { GenerateSpec, KeyFacts, KeySpec, WorkerError, WorkerStats } from './worker-protocol.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type P11 = any;
/** A PKCS#11 handle as pkcs11js gives it. */
export type Handle = Buffer;

// PKCS#11 v2.40 constants (pkcs11t.h; reference 4.1/4.4).
const CKU_USER = 1;
export const CKF_SERIAL_SESSION = 4;
export const CKF_RW_SESSION = 2;
const CKF_OS_LOCKING_OK = 2;
const CKO_PUBLIC_KEY = 2;
const CKO_PRIVATE_KEY = 3;
const CKO_SECRET_KEY = 4;
const CKK_RSA = 0;
const CKK_EC = 3;
const CKK_AES = 0x1f;
export const CKA = {
  CLASS: 0x0,
  TOKEN: 0x1,
  PRIVATE: 0x2,
  LABEL: 0x3,
  VALUE: 0x11,
  KEY_TYPE: 0x100,
  ID: 0x102,
  SENSITIVE: 0x103,
  ENCRYPT: 0x104,
  DECRYPT: 0x105,
  WRAP: 0x106,
  UNWRAP: 0x107,
  SIGN: 0x108,
  VERIFY: 0x10a,
  MODULUS: 0x120,
  MODULUS_BITS: 0x121,
  PUBLIC_EXPONENT: 0x122,
  VALUE_LEN: 0x161,
  EXTRACTABLE: 0x162,
  NEVER_EXTRACTABLE: 0x164,
  ALWAYS_SENSITIVE: 0x165,
  EC_PARAMS: 0x180,
  EC_POINT: 0x181,
} as const;
const CKM_RSA_PKCS_KEY_PAIR_GEN = 0x0;
const CKM_EC_KEY_PAIR_GEN = 0x1040;
const CKM_AES_KEY_GEN = 0x1080;
const CKS_RO_USER_FUNCTIONS = 1;
const CKS_RW_USER_FUNCTIONS = 3;
const CKR_USER_ALREADY_LOGGED_IN = 0x100;
const CKR_CRYPTOKI_ALREADY_INITIALIZED = 0x191;
/** Codes after which sessions, logins and handles are suspect: drop them, re-initialize, retry once. */
export const TOKEN_GONE = new Set([
  0x05 /* GENERAL_ERROR */, 0x30 /* DEVICE_ERROR */, 0x32 /* DEVICE_REMOVED */, 0x60 /* KEY_HANDLE_INVALID */,
  0x82 /* OBJECT_HANDLE_INVALID */, 0xb0 /* SESSION_CLOSED */, 0xb3 /* SESSION_HANDLE_INVALID */,
  0xe0 /* TOKEN_NOT_PRESENT */, 0x101 /* USER_NOT_LOGGED_IN */, 0x190 /* CRYPTOKI_NOT_INITIALIZED */,
]);

/** A failure with a keyhold reason (sent to the main thread as data). */
export class Refusal extends Error {
  constructor(
    readonly reason: string,
    message: string,
    readonly code?: number,
  ) {
    super(message);
  }
}

/** A token this process is logged in to. */
export interface TokenState {
  slot: Handle;
  label: string;
  /** The persistent session that holds the login for the whole process. */
  loginSession: Handle;
  pin: string;
}

let p11: P11 | null = null;
let libraryPath = '';
const tokens = new Map<string, TokenState>();
/** Counters the main thread reads (`stats`); sessions are counted here and in the worker's key pools. */
export const stats: WorkerStats = {
  logins: 0,
  sessionsOpen: 0,
  reinitializations: 0,
  inFlight: 0,
  maxInFlight: 0,
  ringRequests: 0,
};
/** False after a C_Initialize failed (SoftHSM2 fails it while its token directory is missing). */
let initialized = false;

/** Whether the library is initialized (the synchronous AES-GCM path needs it). */
export function libraryInitialized(): boolean {
  return initialized;
}

/** Close every token's login session and finalize the library (a re-initialization follows). */
export function finalizeLibrary(): void {
  const p = lib();
  for (const t of tokens.values()) closeSession(t.loginSession);
  tokens.clear();
  try {
    p.C_Finalize();
  } catch {
    /* not initialised */
  }
  initialized = false;
}

/** C_Initialize when the last attempt failed; a failure is a 503-class refusal, retried on the next call. */
export function ensureInitialized(): void {
  if (initialized) return;
  try {
    lib().C_Initialize({ flags: CKF_OS_LOCKING_OK });
  } catch (e) {
    if (ckrOf(e) !== CKR_CRYPTOKI_ALREADY_INITIALIZED)
      throw new Refusal('token', `C_Initialize failed (${toError(e).name}); is the token available?`);
  }
  initialized = true;
}

export function ckrOf(e: unknown): number | undefined {
  const c = (e as { code?: unknown })?.code;
  return typeof c === 'number' ? c : undefined;
}

export function toError(e: unknown): WorkerError {
  if (e instanceof Refusal) return { name: e.reason, code: e.code, message: e.message };
  const code = ckrOf(e);
  const msg = String((e as Error)?.message ?? e);
  // pkcs11js puts the CKR name in `message`; method names the PKCS#11 function when known.
  const method = (e as { method?: string })?.method;
  if (code !== undefined)
    return { name: msg.split(/[\s:]/)[0] || 'CKR_UNKNOWN', code, message: method ? `${method}: ${msg}` : msg };
  return { name: 'binding', message: msg };
}

export function load(path: string): void {
  if (p11 && libraryPath === path) return;
  let mod: any;
  try {
    mod = requirePkcs11js();
  } catch (e) {
    throw new Refusal(
      'binding',
      `the PKCS#11 binding (npm package pkcs11js) is not installed or did not build: ${(e as Error).message.split('\n')[0]}`,
    );
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

export function lib(): P11 {
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

export function openToken(spec: KeySpec): TokenState {
  const { slot, label } = findSlot(spec);
  const k = slot.readBigUInt64LE(0).toString();
  const have = tokens.get(k);
  if (have) {
    // The login is shared by every key of the token: a key configured with another PIN must not ride on it.
    if (have.pin !== spec.pin)
      throw new Refusal(
        'CKR_PIN_INCORRECT',
        `login to token "${have.label}" failed: CKR_PIN_INCORRECT (the PIN differs from the one the token is logged in with)`,
        0xa0,
      );
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

export function closeSession(s: Handle): void {
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

export function attr(session: Handle, h: Handle, type: number): Buffer | undefined {
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

export function describe(
  session: Handle,
  key: Handle,
  pub: Handle | undefined,
  spec: KeySpec,
  generated: boolean,
): KeyFacts {
  const kt = ulong(attr(session, key, CKA.KEY_TYPE));
  const id = attr(session, key, CKA.ID) ?? Buffer.alloc(0);
  const label = attr(session, key, CKA.LABEL)?.toString('utf8') ?? spec.keyLabel ?? '';
  if (kt === CKK_AES)
    return { kind: 'aes', bits: (ulong(attr(session, key, CKA.VALUE_LEN)) ?? 0) * 8, id, label, generated };
  if (kt === CKK_RSA) {
    const src = pub ?? key;
    const modulus = attr(session, src, CKA.MODULUS);
    return {
      kind: 'rsa',
      bits: modulus ? modulus.length * 8 : undefined,
      modulus,
      publicExponent: attr(session, src, CKA.PUBLIC_EXPONENT),
      id,
      label,
      generated,
    };
  }
  if (kt === CKK_EC) {
    const point = pub ? attr(session, pub, CKA.EC_POINT) : undefined;
    return {
      kind: 'ec',
      ecParams: attr(session, key, CKA.EC_PARAMS) ?? (pub ? attr(session, pub, CKA.EC_PARAMS) : undefined),
      ecPoint: point ? unwrapOctetString(point) : undefined,
      id,
      label,
      generated,
    };
  }
  throw new Refusal('key', `key "${label}" has an unsupported key type ${kt}`);
}

export function lookup(token: TokenState, spec: KeySpec): { key?: Handle; pub?: Handle } {
  const s = token.loginSession;
  const priv = find(s, template(spec, CKO_PRIVATE_KEY));
  const secret = priv.length ? [] : find(s, template(spec, CKO_SECRET_KEY));
  const hits = priv.length ? priv : secret;
  if (hits.length > 1)
    throw new Refusal('key', `more than one key matches label/id on token "${token.label}"; set key_id to pick one`);
  const key = hits[0];
  const pub = priv.length ? find(s, template(spec, CKO_PUBLIC_KEY))[0] : undefined;
  return { key, pub };
}

export function destroyMatching(token: TokenState, spec: KeySpec): void {
  const s = token.loginSession;
  for (const cls of [CKO_PRIVATE_KEY, CKO_PUBLIC_KEY, CKO_SECRET_KEY])
    for (const h of find(s, template(spec, cls))) lib().C_DestroyObject(s, h);
}

export async function generate(
  token: TokenState,
  spec: KeySpec,
  g: GenerateSpec,
): Promise<{ key: Handle; pub?: Handle }> {
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
  const secretAttrs = [
    { type: CKA.PRIVATE, value: true },
    { type: CKA.SENSITIVE, value: true },
    { type: CKA.EXTRACTABLE, value: false },
  ];
  if (g.kind === 'aes') {
    const key: Handle = await p.C_GenerateKeyAsync(s, { mechanism: CKM_AES_KEY_GEN }, [
      ...common(CKO_SECRET_KEY),
      { type: CKA.KEY_TYPE, value: CKK_AES },
      { type: CKA.VALUE_LEN, value: (g.bits ?? 256) / 8 },
      ...secretAttrs,
      { type: CKA.ENCRYPT, value: true },
      { type: CKA.DECRYPT, value: true },
      { type: CKA.WRAP, value: true },
      { type: CKA.UNWRAP, value: true },
    ]);
    return { key };
  }
  const pubTpl: Array<{ type: number; value: unknown }> = [
    ...common(CKO_PUBLIC_KEY),
    { type: CKA.VERIFY, value: true },
    { type: CKA.PRIVATE, value: false },
  ];
  const privTpl: Array<{ type: number; value: unknown }> = [
    ...common(CKO_PRIVATE_KEY),
    ...secretAttrs,
    { type: CKA.SIGN, value: true },
  ];
  if (g.kind === 'rsa') {
    pubTpl.push(
      { type: CKA.KEY_TYPE, value: CKK_RSA },
      { type: CKA.MODULUS_BITS, value: g.bits ?? 2048 },
      { type: CKA.PUBLIC_EXPONENT, value: Buffer.from([1, 0, 1]) },
      { type: CKA.ENCRYPT, value: true },
      { type: CKA.WRAP, value: true },
    );
    privTpl.push(
      { type: CKA.KEY_TYPE, value: CKK_RSA },
      { type: CKA.DECRYPT, value: true },
      { type: CKA.UNWRAP, value: true },
    );
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
