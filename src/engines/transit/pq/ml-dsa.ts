/**
 * ML-DSA (FIPS 204), written for keyhold from the standard's algorithms: key generation from a 32-byte
 * seed (Algorithm 6), signing (Algorithm 7, hedged or deterministic) and verification (Algorithm 8),
 * with the external interfaces of section 5: pure ML-DSA with a context string (Algorithms 2-3) and
 * HashML-DSA (Algorithms 4-5). SHAKE comes from node:crypto. Arithmetic mod q uses JS numbers: every
 * product of two residues is below 2^46, exact in a double. Checked against NIST's ACVP vectors
 * (test/vectors/ml-dsa-*.json) and, where the running Node has it, against node:crypto's ML-DSA.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const Q = 8380417;
const N = 256;
const D = 13;

/** The three parameter sets (FIPS 204 table 1). */
export type MlDsaLevel = 44 | 65 | 87;

interface Params {
  k: number;
  l: number;
  eta: number;
  tau: number;
  /** Collision strength; the commitment hash c~ has lambda/4 bytes. */
  lambda: number;
  gamma1: number;
  gamma2: number;
  omega: number;
  beta: number;
}

const param = (
  k: number,
  l: number,
  eta: number,
  tau: number,
  lambda: number,
  gamma1: number,
  gamma2: number,
  omega: number,
): Params => ({
  k,
  l,
  eta,
  tau,
  lambda,
  gamma1,
  gamma2,
  omega,
  beta: tau * eta,
});

const PARAMS: Record<MlDsaLevel, Params> = {
  44: param(4, 4, 2, 39, 128, 1 << 17, (Q - 1) / 88, 80),
  65: param(6, 5, 4, 49, 192, 1 << 19, (Q - 1) / 32, 55),
  87: param(8, 7, 2, 60, 256, 1 << 19, (Q - 1) / 32, 75),
};

type Poly = Int32Array;

const bitlen = (x: number): number => (x === 0 ? 0 : 32 - Math.clz32(x));
const mod = (a: number): number => {
  const r = a % Q;
  return r < 0 ? r + Q : r;
};
/** The representative in (-(q-1)/2, (q-1)/2]. */
const centered = (a: number): number => {
  const r = mod(a);
  return r > (Q - 1) / 2 ? r - Q : r;
};

/** Byte sizes of keys and signatures for a parameter set. */
export function mlDsaSizes(level: MlDsaLevel): { publicKey: number; secretKey: number; signature: number } {
  const p = PARAMS[level];
  const etaBits = bitlen(2 * p.eta);
  return {
    publicKey: 32 + 320 * p.k,
    secretKey: 128 + 32 * ((p.k + p.l) * etaBits + D * p.k),
    signature: p.lambda / 4 + p.l * 32 * (1 + bitlen(p.gamma1 - 1)) + p.omega + p.k,
  };
}

// ---- SHAKE ----

function shake(alg: 'shake128' | 'shake256', parts: Uint8Array[], outLen: number): Buffer {
  const h = createHash(alg, { outputLength: outLen });
  for (const p of parts) h.update(p);
  return h.digest();
}

/** An XOF output read byte by byte; grows by recomputing (a longer SHAKE output extends a shorter one). */
class XofReader {
  private buf: Buffer;
  private pos = 0;
  constructor(
    private readonly alg: 'shake128' | 'shake256',
    private readonly input: Uint8Array[],
    initial: number,
  ) {
    this.buf = shake(alg, input, initial);
  }
  byte(): number {
    if (this.pos >= this.buf.length) this.buf = shake(this.alg, this.input, this.buf.length * 2);
    return this.buf[this.pos++]!;
  }
}

// ---- NTT (FIPS 204 Algorithms 41-42) ----

function powMod(b: number, e: number): number {
  let r = 1;
  let x = b % Q;
  while (e > 0) {
    if (e & 1) r = (r * x) % Q;
    x = (x * x) % Q;
    e >>= 1;
  }
  return r;
}
const brv8 = (x: number): number => {
  let r = 0;
  for (let i = 0; i < 8; i++) r |= ((x >> i) & 1) << (7 - i);
  return r;
};
const ZETAS = Int32Array.from({ length: N }, (_, k) => powMod(1753, brv8(k)));
const N_INV = 8347681; // 256^-1 mod q

function ntt(a: Poly): Poly {
  const w = Int32Array.from(a, mod);
  let m = 0;
  for (let len = 128; len >= 1; len >>= 1) {
    for (let start = 0; start < N; start += 2 * len) {
      const z = ZETAS[++m]!;
      for (let j = start; j < start + len; j++) {
        const t = (z * w[j + len]!) % Q;
        w[j + len] = mod(w[j]! - t);
        w[j] = (w[j]! + t) % Q;
      }
    }
  }
  return w;
}

function invNtt(a: Poly): Poly {
  const w = Int32Array.from(a, mod);
  let m = N;
  for (let len = 1; len < N; len <<= 1) {
    for (let start = 0; start < N; start += 2 * len) {
      const z = Q - ZETAS[--m]!;
      for (let j = start; j < start + len; j++) {
        const t = w[j]!;
        w[j] = (t + w[j + len]!) % Q;
        w[j + len] = (z * mod(t - w[j + len]!)) % Q;
      }
    }
  }
  for (let j = 0; j < N; j++) w[j] = (N_INV * w[j]!) % Q;
  return w;
}

const pointwise = (a: Poly, b: Poly): Poly => a.map((x, i) => (x * b[i]!) % Q);
const polyAdd = (a: Poly, b: Poly): Poly => a.map((x, i) => mod(x + b[i]!));
const polySub = (a: Poly, b: Poly): Poly => a.map((x, i) => mod(x - b[i]!));
/** Infinity norm of a polynomial (coefficients taken centered). */
const normInf = (a: Poly): number => {
  let m = 0;
  for (const x of a) {
    const c = Math.abs(centered(x));
    if (c > m) m = c;
  }
  return m;
};

/** Â ∘ v̂ for a k×l matrix and an l-vector, both in the NTT domain: the k-vector of results back in R_q. */
function matVec(A: Poly[][], v: Poly[]): Poly[] {
  return A.map((row) => {
    let acc: Poly = new Int32Array(N);
    row.forEach((a, s) => {
      acc = polyAdd(acc, pointwise(a, v[s]!));
    });
    return invNtt(acc);
  });
}

// ---- bit packing (FIPS 204 Algorithms 16-21), least significant bit first ----

function packBits(values: ArrayLike<number>, bits: number): Buffer {
  const out = Buffer.alloc((values.length * bits) / 8);
  let acc = 0;
  let n = 0;
  let o = 0;
  for (let i = 0; i < values.length; i++) {
    acc += values[i]! * 2 ** n;
    n += bits;
    while (n >= 8) {
      out[o++] = acc & 0xff;
      acc = Math.floor(acc / 256);
      n -= 8;
    }
  }
  return out;
}

function unpackBits(bytes: Uint8Array, bits: number, count: number): number[] {
  const out: number[] = new Array(count);
  let acc = 0;
  let n = 0;
  let i = 0;
  const mask = 2 ** bits;
  for (let c = 0; c < count; c++) {
    while (n < bits) {
      acc += bytes[i++]! * 2 ** n;
      n += 8;
    }
    out[c] = acc % mask;
    acc = Math.floor(acc / mask);
    n -= bits;
  }
  return out;
}

/** BitPack(w, a, b): each coefficient w in [-a, b] stored as b - w. */
const bitPack = (w: ArrayLike<number>, a: number, b: number): Buffer =>
  packBits(
    Array.from(w, (x) => b - x),
    bitlen(a + b),
  );
const bitUnpack = (bytes: Uint8Array, a: number, b: number): Poly =>
  Int32Array.from(unpackBits(bytes, bitlen(a + b), N), (x) => b - x);

// ---- sampling (FIPS 204 Algorithms 29-34) ----

function sampleInBall(p: Params, seed: Uint8Array): Poly {
  const c = new Int32Array(N);
  const x = new XofReader('shake256', [seed], 272);
  const signs: number[] = [];
  for (let i = 0; i < 8; i++) {
    const b = x.byte();
    for (let j = 0; j < 8; j++) signs.push((b >> j) & 1);
  }
  for (let i = N - p.tau; i < N; i++) {
    let j = x.byte();
    while (j > i) j = x.byte();
    c[i] = c[j]!;
    c[j] = signs[i + p.tau - N] ? -1 : 1;
  }
  return c;
}

function rejNttPoly(seed: Uint8Array): Poly {
  const a = new Int32Array(N);
  const x = new XofReader('shake128', [seed], 840);
  let j = 0;
  while (j < N) {
    const z = x.byte() + (x.byte() << 8) + ((x.byte() & 0x7f) << 16);
    if (z < Q) a[j++] = z;
  }
  return a;
}

function rejBoundedPoly(eta: number, seed: Uint8Array): Poly {
  const a = new Int32Array(N);
  const x = new XofReader('shake256', [seed], 272);
  let j = 0;
  const coeff = (b: number): number | null => {
    if (eta === 2) return b < 15 ? 2 - (b % 5) : null;
    return b < 9 ? 4 - b : null;
  };
  while (j < N) {
    const z = x.byte();
    const z0 = coeff(z & 15);
    const z1 = coeff(z >> 4);
    if (z0 !== null) a[j++] = z0;
    if (z1 !== null && j < N) a[j++] = z1;
  }
  return a;
}

function expandA(p: Params, rho: Uint8Array): Poly[][] {
  return Array.from({ length: p.k }, (_, r) =>
    Array.from({ length: p.l }, (_, s) => rejNttPoly(Buffer.concat([rho, Buffer.from([s, r])]))),
  );
}

function expandS(p: Params, rho: Uint8Array): { s1: Poly[]; s2: Poly[] } {
  const poly = (r: number) => rejBoundedPoly(p.eta, Buffer.concat([rho, Buffer.from([r & 0xff, r >> 8])]));
  return {
    s1: Array.from({ length: p.l }, (_, r) => poly(r)),
    s2: Array.from({ length: p.k }, (_, r) => poly(r + p.l)),
  };
}

function expandMask(p: Params, rho: Uint8Array, kappa: number): Poly[] {
  const c = 1 + bitlen(p.gamma1 - 1);
  return Array.from({ length: p.l }, (_, r) => {
    const n = kappa + r;
    const v = shake('shake256', [rho, Buffer.from([n & 0xff, n >> 8])], 32 * c);
    return bitUnpack(v, p.gamma1 - 1, p.gamma1);
  });
}

// ---- rounding (FIPS 204 Algorithms 35-40) ----

function power2Round(r: number): [number, number] {
  const rp = mod(r);
  let r0 = rp % (1 << D);
  if (r0 > 1 << (D - 1)) r0 -= 1 << D;
  return [(rp - r0) / (1 << D), r0];
}

function decompose(p: Params, r: number): [number, number] {
  const rp = mod(r);
  let r0 = rp % (2 * p.gamma2);
  if (r0 > p.gamma2) r0 -= 2 * p.gamma2;
  if (rp - r0 === Q - 1) return [0, r0 - 1];
  return [(rp - r0) / (2 * p.gamma2), r0];
}

const highBits = (p: Params, r: number): number => decompose(p, r)[0];

function useHint(p: Params, h: number, r: number): number {
  const m = (Q - 1) / (2 * p.gamma2);
  const [r1, r0] = decompose(p, r);
  if (h === 1 && r0 > 0) return (r1 + 1) % m;
  if (h === 1 && r0 <= 0) return (r1 - 1 + m) % m;
  return r1;
}

function w1Encode(p: Params, w1: Poly[]): Buffer {
  const bits = bitlen((Q - 1) / (2 * p.gamma2) - 1);
  return Buffer.concat(w1.map((w) => packBits(w, bits)));
}

// ---- encodings (FIPS 204 Algorithms 22-28) ----

function pkDecode(p: Params, pk: Uint8Array): { rho: Buffer; t1: Poly[] } {
  const rho = Buffer.from(pk.subarray(0, 32));
  const t1 = Array.from({ length: p.k }, (_, i) =>
    Int32Array.from(unpackBits(pk.subarray(32 + 320 * i, 32 + 320 * (i + 1)), 10, N)),
  );
  return { rho, t1 };
}

interface SecretKey {
  rho: Buffer;
  K: Buffer;
  tr: Buffer;
  s1: Poly[];
  s2: Poly[];
  t0: Poly[];
}

function skDecode(p: Params, sk: Uint8Array): SecretKey {
  const etaBytes = 32 * bitlen(2 * p.eta);
  const tBytes = 32 * D;
  let off = 128;
  const take = (n: number) => {
    const b = sk.subarray(off, off + n);
    off += n;
    return b;
  };
  const s1 = Array.from({ length: p.l }, () => bitUnpack(take(etaBytes), p.eta, p.eta));
  const s2 = Array.from({ length: p.k }, () => bitUnpack(take(etaBytes), p.eta, p.eta));
  const t0 = Array.from({ length: p.k }, () => bitUnpack(take(tBytes), (1 << (D - 1)) - 1, 1 << (D - 1)));
  return {
    rho: Buffer.from(sk.subarray(0, 32)),
    K: Buffer.from(sk.subarray(32, 64)),
    tr: Buffer.from(sk.subarray(64, 128)),
    s1,
    s2,
    t0,
  };
}

function hintBitPack(p: Params, h: Poly[]): Buffer {
  const y = Buffer.alloc(p.omega + p.k);
  let index = 0;
  h.forEach((hi, i) => {
    for (let j = 0; j < N; j++) if (hi[j]) y[index++] = j;
    y[p.omega + i] = index;
  });
  return y;
}

function hintBitUnpack(p: Params, y: Uint8Array): Poly[] | null {
  const h = Array.from({ length: p.k }, () => new Int32Array(N));
  let index = 0;
  for (let i = 0; i < p.k; i++) {
    const end = y[p.omega + i]!;
    if (end < index || end > p.omega) return null;
    const first = index;
    while (index < end) {
      if (index > first && y[index - 1]! >= y[index]!) return null;
      h[i]![y[index]!] = 1;
      index++;
    }
  }
  for (let i = index; i < p.omega; i++) if (y[i] !== 0) return null;
  return h;
}

// ---- the internal algorithms (FIPS 204 Algorithms 6-8) ----

/** ML-DSA.KeyGen_internal: the key pair of a 32-byte seed. */
export function mlDsaKeygen(level: MlDsaLevel, seed: Uint8Array): { publicKey: Buffer; secretKey: Buffer } {
  if (seed.length !== 32) throw new RangeError(`ML-DSA seed must be 32 bytes, got ${seed.length}`);
  const p = PARAMS[level];
  const h = shake('shake256', [seed, Buffer.from([p.k, p.l])], 128);
  const rho = h.subarray(0, 32);
  const rhoP = h.subarray(32, 96);
  const K = h.subarray(96, 128);
  const A = expandA(p, rho);
  const { s1, s2 } = expandS(p, rhoP);
  const t = matVec(A, s1.map(ntt)).map((ti, i) => polyAdd(ti, s2[i]!));
  const t1: Poly[] = [];
  const t0: Poly[] = [];
  for (const ti of t) {
    const hi = new Int32Array(N);
    const lo = new Int32Array(N);
    ti.forEach((x, j) => {
      [hi[j], lo[j]] = power2Round(x);
    });
    t1.push(hi);
    t0.push(lo);
  }
  const publicKey = Buffer.concat([rho, ...t1.map((w) => packBits(w, 10))]);
  const tr = shake('shake256', [publicKey], 64);
  const half = 1 << (D - 1);
  const secretKey = Buffer.concat([
    rho,
    K,
    tr,
    ...s1.map((w) => bitPack(w, p.eta, p.eta)),
    ...s2.map((w) => bitPack(w, p.eta, p.eta)),
    ...t0.map((w) => bitPack(w, half - 1, half)),
  ]);
  return { publicKey, secretKey };
}

/** ML-DSA.Sign_internal over the formatted message M' with 32 bytes of randomness (zeros: deterministic). */
export function mlDsaSignInternal(
  level: MlDsaLevel,
  secretKey: Uint8Array,
  message: Uint8Array,
  rnd: Uint8Array,
): Buffer {
  const p = PARAMS[level];
  if (secretKey.length !== mlDsaSizes(level).secretKey)
    throw new RangeError(`ML-DSA-${level} secret key must be ${mlDsaSizes(level).secretKey} bytes`);
  const sk = skDecode(p, secretKey);
  const s1h = sk.s1.map(ntt);
  const s2h = sk.s2.map(ntt);
  const t0h = sk.t0.map(ntt);
  const A = expandA(p, sk.rho);
  const mu = shake('shake256', [sk.tr, message], 64);
  const rhoPP = shake('shake256', [sk.K, rnd, mu], 64);
  const cBytes = p.lambda / 4;
  for (let kappa = 0; kappa < 0x10000; kappa += p.l) {
    const y = expandMask(p, rhoPP, kappa);
    const w = matVec(A, y.map(ntt));
    const w1 = w.map((wi) => wi.map((x) => highBits(p, x)));
    const cTilde = shake('shake256', [mu, w1Encode(p, w1)], cBytes);
    const ch = ntt(sampleInBall(p, cTilde));
    const cs1 = s1h.map((s) => invNtt(pointwise(ch, s)));
    const cs2 = s2h.map((s) => invNtt(pointwise(ch, s)));
    const z = y.map((yi, i) => polyAdd(yi, cs1[i]!));
    if (z.some((zi) => normInf(zi) >= p.gamma1 - p.beta)) continue;
    const wMinus = w.map((wi, i) => polySub(wi, cs2[i]!));
    if (wMinus.some((wi) => wi.some((x) => Math.abs(decompose(p, x)[1]) >= p.gamma2 - p.beta))) continue;
    const ct0 = t0h.map((t) => invNtt(pointwise(ch, t)));
    if (ct0.some((c) => normInf(c) >= p.gamma2)) continue;
    // MakeHint(-ct0, w - cs2 + ct0): the high bits of w - cs2 + ct0 differ from those of w - cs2.
    const h = wMinus.map((wi, i) => wi.map((x, j) => (highBits(p, x + ct0[i]![j]!) !== highBits(p, x) ? 1 : 0)));
    if (h.reduce((n, hi) => n + hi.reduce((a, b) => a + b, 0), 0) > p.omega) continue;
    return Buffer.concat([
      cTilde,
      ...z.map((zi) => bitPack(Array.from(zi, centered), p.gamma1 - 1, p.gamma1)),
      hintBitPack(p, h),
    ]);
  }
  throw new Error('ML-DSA signing did not terminate');
}

/** ML-DSA.Verify_internal over the formatted message M'. */
export function mlDsaVerifyInternal(
  level: MlDsaLevel,
  publicKey: Uint8Array,
  message: Uint8Array,
  sig: Uint8Array,
): boolean {
  const p = PARAMS[level];
  const sizes = mlDsaSizes(level);
  if (publicKey.length !== sizes.publicKey || sig.length !== sizes.signature) return false;
  const { rho, t1 } = pkDecode(p, publicKey);
  const cBytes = p.lambda / 4;
  const cTilde = sig.subarray(0, cBytes);
  const zBytes = 32 * (1 + bitlen(p.gamma1 - 1));
  const z = Array.from({ length: p.l }, (_, i) =>
    bitUnpack(sig.subarray(cBytes + zBytes * i, cBytes + zBytes * (i + 1)), p.gamma1 - 1, p.gamma1),
  );
  const h = hintBitUnpack(p, sig.subarray(cBytes + zBytes * p.l));
  if (!h) return false;
  if (z.some((zi) => normInf(zi) >= p.gamma1 - p.beta)) return false;
  const A = expandA(p, rho);
  const tr = shake('shake256', [publicKey], 64);
  const mu = shake('shake256', [tr, message], 64);
  const ch = ntt(sampleInBall(p, cTilde));
  const zh = z.map(ntt);
  const t1h = t1.map((t) => ntt(t.map((x) => x * (1 << D))));
  const wApprox = A.map((row, i) => {
    let acc: Poly = new Int32Array(N);
    row.forEach((a, s) => {
      acc = polyAdd(acc, pointwise(a, zh[s]!));
    });
    return invNtt(polySub(acc, pointwise(ch, t1h[i]!)));
  });
  const w1 = wApprox.map((wi, i) => wi.map((x, j) => useHint(p, h[i]![j]!, x)));
  const again = shake('shake256', [mu, w1Encode(p, w1)], cBytes);
  const given = Buffer.from(cTilde);
  return again.length === given.length && timingSafeEqual(again, given);
}

// ---- the external interfaces (FIPS 204 section 5.2-5.4) ----

/** DER OIDs of the hash functions HashML-DSA may use (FIPS 204 section 5.4.1). */
const PREHASH: Record<string, { oid: string; node: string; size: number }> = {
  'sha2-224': { oid: '0609608648016503040204', node: 'sha224', size: 28 },
  'sha2-256': { oid: '0609608648016503040201', node: 'sha256', size: 32 },
  'sha2-384': { oid: '0609608648016503040202', node: 'sha384', size: 48 },
  'sha2-512': { oid: '0609608648016503040203', node: 'sha512', size: 64 },
  'sha3-224': { oid: '0609608648016503040207', node: 'sha3-224', size: 28 },
  'sha3-256': { oid: '0609608648016503040208', node: 'sha3-256', size: 32 },
  'sha3-384': { oid: '0609608648016503040209', node: 'sha3-384', size: 48 },
  'sha3-512': { oid: '060960864801650304020a', node: 'sha3-512', size: 64 },
};

/** Hash names HashML-DSA accepts here (Vault's names). */
export const ML_DSA_PREHASHES = Object.keys(PREHASH);

/** Options of the external sign/verify. */
export interface MlDsaOptions {
  /** Context string, at most 255 bytes (default empty). */
  context?: Uint8Array;
  /** HashML-DSA with this hash; `prehashed` says the message already is its digest. */
  preHash?: { hash: string; prehashed?: boolean };
}

/** M' of FIPS 204 Algorithms 2 and 4. */
export function formatMessage(message: Uint8Array, o: MlDsaOptions = {}): Buffer {
  const ctx = o.context ?? new Uint8Array(0);
  if (ctx.length > 255) throw new RangeError('ML-DSA context must be at most 255 bytes');
  if (!o.preHash) return Buffer.concat([Buffer.from([0, ctx.length]), ctx, message]);
  const ph = PREHASH[o.preHash.hash];
  if (!ph) throw new RangeError(`HashML-DSA does not support hash ${o.preHash.hash}`);
  const digest = o.preHash.prehashed ? Buffer.from(message) : createHash(ph.node).update(message).digest();
  if (digest.length !== ph.size)
    throw new RangeError(`a prehashed ${o.preHash.hash} digest must be ${ph.size} bytes, got ${digest.length}`);
  return Buffer.concat([Buffer.from([1, ctx.length]), ctx, Buffer.from(ph.oid, 'hex'), digest]);
}

/** ML-DSA.Sign / HashML-DSA.Sign (hedged: fresh randomness; `deterministic` uses zeros). */
export function mlDsaSign(
  level: MlDsaLevel,
  secretKey: Uint8Array,
  message: Uint8Array,
  o: MlDsaOptions & { deterministic?: boolean } = {},
): Buffer {
  const rnd = o.deterministic ? Buffer.alloc(32) : randomBytes(32);
  return mlDsaSignInternal(level, secretKey, formatMessage(message, o), rnd);
}

/** ML-DSA.Verify / HashML-DSA.Verify. */
export function mlDsaVerify(
  level: MlDsaLevel,
  publicKey: Uint8Array,
  message: Uint8Array,
  sig: Uint8Array,
  o: MlDsaOptions = {},
): boolean {
  return mlDsaVerifyInternal(level, publicKey, formatMessage(message, o), sig);
}
