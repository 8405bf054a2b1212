/**
 * The binary form of the hot calls between the main thread and a PKCS#11 worker (sign, encrypt,
 * decrypt and their byte results). Structured clone of one request object with its nested params and
 * typed arrays costs several microseconds per side, more than the AES-GCM call itself in SoftHSM2
 * (bench managed-encrypt-aes-gcm); a batch packed into one transferred ArrayBuffer costs a fraction
 * of that and no copy. Other calls (load, open, attributes, stats, errors) stay structured-clone
 * objects. Integers are little-endian; a key is an index into the batch's `refs`.
 *
 * Request frame: u32 id, u8 op, u32 ref, u32 mechanism, u8 params type, params, u32 out length,
 * u32 data length, data. Params: none: -; pss: u32 hash, u32 mgf, u32 salt length; oaep: u32 hash,
 * u32 mgf; gcm: u8 tag bits, u8 IV length, IV, u32 AAD length + 1 (0 = no AAD), AAD.
 * Reply frame: u32 id, u32 length, bytes.
 */
import type { MechParams, WorkerRequest } from './worker-protocol.js';

/** A call that travels as a frame. */
export type HotRequest = Extract<WorkerRequest, { op: 'sign' | 'encrypt' | 'decrypt' }>;

const OPS = ['sign', 'encrypt', 'decrypt'] as const;
const PARAMS = ['none', 'pss', 'oaep', 'gcm'] as const;

/** A hot call before it has an id. */
export type HotCall = HotRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** Whether a request travels as a frame. */
export function isHot(r: WorkerRequest): r is HotRequest {
  return r.op === 'sign' || r.op === 'encrypt' || r.op === 'decrypt';
}

function paramsSize(p: MechParams): number {
  switch (p.type) {
    case 'none':
      return 0;
    case 'pss':
      return 12;
    case 'oaep':
      return 8;
    case 'gcm':
      return 2 + p.iv.byteLength + 4 + (p.aad?.byteLength ?? 0);
  }
}

/** Bytes of one request frame. */
export function requestSize(r: HotCall): number {
  return 4 + 1 + 4 + 4 + 1 + paramsSize(r.params) + 4 + 4 + r.data.byteLength;
}

/** Write one request frame at `o` (`ref` = the key's number); returns the offset after it. */
export function writeRequest(v: DataView, u8: Uint8Array, o: number, r: HotCall, ref: number, id: number): number {
  v.setUint32(o, id, true);
  v.setUint8(o + 4, OPS.indexOf(r.op));
  v.setUint32(o + 5, ref, true);
  v.setUint32(o + 9, r.mechanism, true);
  const p = r.params;
  v.setUint8(o + 13, PARAMS.indexOf(p.type));
  o += 14;
  if (p.type === 'pss') {
    v.setUint32(o, p.hashAlg, true);
    v.setUint32(o + 4, p.mgf, true);
    v.setUint32(o + 8, p.saltLen, true);
    o += 12;
  } else if (p.type === 'oaep') {
    v.setUint32(o, p.hashAlg, true);
    v.setUint32(o + 4, p.mgf, true);
    o += 8;
  } else if (p.type === 'gcm') {
    v.setUint8(o, p.tagBits);
    v.setUint8(o + 1, p.iv.byteLength);
    u8.set(p.iv, o + 2);
    o += 2 + p.iv.byteLength;
    v.setUint32(o, p.aad ? p.aad.byteLength + 1 : 0, true);
    if (p.aad) u8.set(p.aad, o + 4);
    o += 4 + (p.aad?.byteLength ?? 0);
  }
  v.setUint32(o, r.outLen, true);
  v.setUint32(o + 4, r.data.byteLength, true);
  u8.set(r.data, o + 8);
  return o + 8 + r.data.byteLength;
}

/**
 * Read one request frame at `o` of `ab` (an ArrayBuffer or SharedArrayBuffer; `v` views it from
 * `base`); byte fields are Buffers over `ab` (no copies). Returns the request and the offset after it.
 */
export function readRequest(
  ab: ArrayBufferLike,
  base: number,
  v: DataView,
  o: number,
  refOf: (n: number) => string,
): [HotRequest, number] {
  const id = v.getUint32(o, true);
  const op = OPS[v.getUint8(o + 4)]!;
  const ref = refOf(v.getUint32(o + 5, true));
  const mechanism = v.getUint32(o + 9, true);
  const type = PARAMS[v.getUint8(o + 13)]!;
  o += 14;
  let params: MechParams;
  if (type === 'pss') {
    params = { type, hashAlg: v.getUint32(o, true), mgf: v.getUint32(o + 4, true), saltLen: v.getUint32(o + 8, true) };
    o += 12;
  } else if (type === 'oaep') {
    params = { type, hashAlg: v.getUint32(o, true), mgf: v.getUint32(o + 4, true) };
    o += 8;
  } else if (type === 'gcm') {
    const tagBits = v.getUint8(o);
    const ivLen = v.getUint8(o + 1);
    const iv = Buffer.from(ab, base + o + 2, ivLen);
    o += 2 + ivLen;
    const aadLen = v.getUint32(o, true);
    const aad = aadLen ? Buffer.from(ab, base + o + 4, aadLen - 1) : undefined;
    o += 4 + (aadLen ? aadLen - 1 : 0);
    params = { type, iv, aad, tagBits };
  } else params = { type };
  const outLen = v.getUint32(o, true);
  const len = v.getUint32(o + 4, true);
  const data = Buffer.from(ab, base + o + 8, len);
  return [{ id, op, ref, mechanism, params, data, outLen } as HotRequest, o + 8 + len];
}

/** Pack hot requests into one buffer; `refs` gets each distinct key ref once. */
export function encodeRequests(reqs: HotRequest[], refs: string[]): ArrayBuffer {
  let size = 0;
  for (const r of reqs) size += requestSize(r);
  const ab = new ArrayBuffer(size);
  const v = new DataView(ab);
  const u8 = new Uint8Array(ab);
  const index = new Map<string, number>();
  let o = 0;
  for (const r of reqs) {
    let ref = index.get(r.ref);
    if (ref === undefined) {
      ref = refs.push(r.ref) - 1;
      index.set(r.ref, ref);
    }
    o = writeRequest(v, u8, o, r, ref, r.id);
  }
  return ab;
}

/** Unpack what encodeRequests packed; byte fields are Buffers over `ab` (no copies). */
export function decodeRequests(ab: ArrayBuffer, refs: string[]): HotRequest[] {
  const v = new DataView(ab);
  const out: HotRequest[] = [];
  const refOf = (n: number) => refs[n]!;
  let o = 0;
  while (o < ab.byteLength) {
    const [r, next] = readRequest(ab, 0, v, o, refOf);
    out.push(r);
    o = next;
  }
  return out;
}

/** Pack byte results (`[id, bytes]` pairs) into one buffer. */
export function encodeResults(results: Array<[number, Uint8Array]>): ArrayBuffer {
  let size = 0;
  for (const [, b] of results) size += 8 + b.byteLength;
  const ab = new ArrayBuffer(size);
  const v = new DataView(ab);
  const u8 = new Uint8Array(ab);
  let o = 0;
  for (const [id, b] of results) {
    v.setUint32(o, id, true);
    v.setUint32(o + 4, b.byteLength, true);
    u8.set(b, o + 8);
    o += 8 + b.byteLength;
  }
  return ab;
}

/** Unpack byte results; each is a Buffer over `ab` (no copy). */
export function decodeResults(ab: ArrayBuffer, each: (id: number, bytes: Buffer) => void): void {
  const v = new DataView(ab);
  let o = 0;
  while (o < ab.byteLength) {
    const id = v.getUint32(o, true);
    const len = v.getUint32(o + 4, true);
    each(id, Buffer.from(ab, o + 8, len));
    o += 8 + len;
  }
}
