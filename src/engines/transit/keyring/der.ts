/**
 * A minimal DER reader and writer: enough ASN.1 for PKCS#8 variants node:crypto cannot load
 * (RSASSA-PSS OID, NSS-style Ed25519), and for building PKCS#10 certificate requests.
 * Single-byte tags only; lengths up to 4 bytes.
 */

/** One decoded TLV. */
export interface Tlv {
  tag: number;
  /** The whole element (header and content). */
  raw: Buffer;
  content: Buffer;
}

/** Decode the TLV at `offset`; throws on truncation. */
export function readTlv(buf: Buffer, offset = 0): Tlv & { end: number } {
  if (offset + 2 > buf.length) throw new Error('DER: truncated header');
  const tag = buf[offset]!;
  let len = buf[offset + 1]!;
  let head = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || offset + 2 + n > buf.length) throw new Error('DER: bad length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[offset + 2 + i]!;
    head += n;
  }
  const end = offset + head + len;
  if (end > buf.length) throw new Error('DER: truncated content');
  return { tag, raw: buf.subarray(offset, end), content: buf.subarray(offset + head, end), end };
}

/** The child elements of a constructed element's content. */
export function children(content: Buffer): Tlv[] {
  const out: Tlv[] = [];
  let off = 0;
  while (off < content.length) {
    const t = readTlv(content, off);
    out.push(t);
    off = t.end;
  }
  return out;
}

/** Decode an OBJECT IDENTIFIER's content to dotted form. */
export function oidText(content: Buffer): string {
  if (content.length === 0) throw new Error('DER: empty OID');
  const parts = [Math.floor(content[0]! / 40), content[0]! % 40];
  let v = 0;
  for (let i = 1; i < content.length; i++) {
    v = v * 128 + (content[i]! & 0x7f);
    if (!(content[i]! & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** Encode one TLV. */
export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), lengthBytes(content.length), content]);
}

/** SEQUENCE of already-encoded elements. */
export function seq(...parts: Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(parts));
}

/** OBJECT IDENTIFIER from dotted form. */
export function oid(dotted: string): Buffer {
  const n = dotted.split('.').map(Number);
  const out: number[] = [n[0]! * 40 + n[1]!];
  for (const v of n.slice(2)) {
    const b: number[] = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) b.unshift((x & 0x7f) | 0x80);
    out.push(...b);
  }
  return tlv(0x06, Buffer.from(out));
}

/** BIT STRING with no unused bits. */
export function bitString(bytes: Buffer): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([0]), bytes]));
}

/** Small non-negative INTEGER. */
export function smallInt(n: number): Buffer {
  return tlv(0x02, Buffer.from([n]));
}

/** NULL. */
export const DER_NULL = Buffer.from([0x05, 0x00]);

/** Wrap DER in PEM armour with 64-column lines and a trailing newline. */
export function toPem(label: string, der: Buffer): string {
  const b64 = der.toString('base64').replace(/.{1,64}/g, '$&\n');
  return `-----BEGIN ${label}-----\n${b64}-----END ${label}-----\n`;
}

/** Every PEM block of `text` as {label, der}. */
export function pemBlocks(text: string): { label: string; der: Buffer }[] {
  const out: { label: string; der: Buffer }[] = [];
  const re = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push({ label: m[1]!, der: Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64') });
  }
  return out;
}
