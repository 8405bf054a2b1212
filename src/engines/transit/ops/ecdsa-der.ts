/**
 * ECDSA signature encodings (reference transit-wire.md section 4.6): ASN.1 DER `SEQUENCE { r, s }`
 * (strict, like Go's encoding/asn1) and JWS `r || s` (fixed-width halves).
 */

/** Why a DER signature was rejected (Vault's two messages). */
export type DerProblem = 'invalid' | 'extra';

function readLength(b: Buffer, pos: number): { len: number; next: number } | null {
  if (pos >= b.length) return null;
  const first = b[pos]!;
  if (first < 0x80) return { len: first, next: pos + 1 };
  const n = first & 0x7f;
  if (n === 0 || n > 3 || pos + 1 + n > b.length) return null;
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + b[pos + 1 + i]!;
  // DER: long form only when needed, no leading zero octets.
  if (len < 0x80 || b[pos + 1] === 0) return null;
  return { len, next: pos + 1 + n };
}

function readInteger(b: Buffer, pos: number, end: number): { value: bigint; next: number } | null {
  if (pos >= end || b[pos] !== 0x02) return null;
  const l = readLength(b, pos + 1);
  if (!l || l.len === 0 || l.next + l.len > end) return null;
  const bytes = b.subarray(l.next, l.next + l.len);
  // Minimal two's complement encoding (Go: "integer not minimally-encoded").
  if (bytes.length > 1 && ((bytes[0] === 0 && bytes[1]! < 0x80) || (bytes[0] === 0xff && bytes[1]! >= 0x80)))
    return null;
  let value = BigInt('0x' + bytes.toString('hex'));
  if (bytes[0]! >= 0x80) value -= 1n << BigInt(8 * bytes.length);
  return { value, next: l.next + l.len };
}

/** Parse a DER ECDSA signature; negative integers parse (and later fail verification), as in Go. */
export function parseDerSignature(sig: Buffer): { r: bigint; s: bigint } | DerProblem {
  if (sig.length < 2 || sig[0] !== 0x30) return 'invalid';
  const l = readLength(sig, 1);
  if (!l || l.next + l.len > sig.length) return 'invalid';
  const end = l.next + l.len;
  const r = readInteger(sig, l.next, end);
  if (!r) return 'invalid';
  const s = readInteger(sig, r.next, end);
  if (!s || s.next !== end) return 'invalid';
  if (end !== sig.length) return 'extra';
  return { r: r.value, s: s.value };
}

function intBytes(v: bigint): Buffer {
  let hex = v.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  let b = Buffer.from(hex, 'hex');
  if (b[0]! >= 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return b;
}

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let x = n; x > 0; x = Math.floor(x / 256)) bytes.unshift(x & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** DER-encode non-negative r and s. */
export function encodeDerSignature(r: bigint, s: bigint): Buffer {
  const ri = intBytes(r);
  const si = intBytes(s);
  const body = Buffer.concat([
    Buffer.from([0x02]),
    derLength(ri.length),
    ri,
    Buffer.from([0x02]),
    derLength(si.length),
    si,
  ]);
  return Buffer.concat([Buffer.from([0x30]), derLength(body.length), body]);
}

/** `r || s`, each left-padded to `size` bytes; null when a value is negative or too wide. */
export function toFixed(r: bigint, s: bigint, size: number): Buffer | null {
  const limit = 1n << BigInt(8 * size);
  if (r < 0n || s < 0n || r >= limit || s >= limit) return null;
  const hex = r.toString(16).padStart(2 * size, '0') + s.toString(16).padStart(2 * size, '0');
  return Buffer.from(hex, 'hex');
}

/** Split a JWS signature into halves (Vault splits the bytes in two, whatever the length). */
export function splitJws(sig: Buffer): { r: bigint; s: bigint } {
  const half = Math.floor(sig.length / 2);
  const big = (b: Buffer) => (b.length ? BigInt('0x' + b.toString('hex')) : 0n);
  return { r: big(sig.subarray(0, half)), s: big(sig.subarray(half)) };
}
