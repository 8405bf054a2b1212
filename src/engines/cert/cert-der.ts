/**
 * What cert auth reads from DER that node:crypto's X509Certificate does not expose: subject
 * attributes (CN, OU), subject alternative names by kind, every extension by OID (RFC 5280
 * section 4.1), and the revoked serial numbers of a CRL (RFC 5280 section 5.1). Built on the DER
 * reader transit already has (transit/keyring/der.ts).
 */
import { children, oidText, pemBlocks, readTlv, type Tlv } from '../transit/keyring/der.js';

const SEQ = 0x30;
const INTEGER = 0x02;
const OID = 0x06;
const OCTETS = 0x04;
const BOOL = 0x01;

/** The parts of a certificate cert auth looks at. */
export interface CertFields {
  subject: Array<{ oid: string; value: string }>;
  /** Subject alternative names: rfc822Name, dNSName, uniformResourceIdentifier. */
  emails: string[];
  dns: string[];
  uris: string[];
  /** Extension value (the OCTET STRING's content) by dotted OID. */
  extensions: Map<string, Buffer>;
}

/** A DER string type's text (UTF8String, PrintableString, IA5String, T61String, BMPString, VisibleString), or null. */
export function derText(t: Tlv): string | null {
  switch (t.tag) {
    case 0x0c:
    case 0x13:
    case 0x16:
    case 0x14:
    case 0x1a:
      return t.content.toString('utf8');
    case 0x1e: {
      // BMPString is UTF-16 big-endian.
      const le = Buffer.from(t.content);
      le.swap16();
      return le.toString('utf16le');
    }
    default:
      return null;
  }
}

/** An INTEGER's content as a non-negative decimal string (serial numbers, as Go's big.Int prints them). */
export function integerDecimal(content: Buffer): string {
  return content.length === 0 ? '0' : BigInt(`0x${content.toString('hex')}`).toString(10);
}

/** Parse the fields of a DER certificate; throws on malformed input. */
export function certFields(der: Buffer): CertFields {
  const cert = readTlv(der);
  if (cert.tag !== SEQ) throw new Error('DER: certificate is not a SEQUENCE');
  const tbs = children(cert.content)[0];
  if (!tbs || tbs.tag !== SEQ) throw new Error('DER: no tbsCertificate');
  const parts = children(tbs.content);
  let i = parts[0]?.tag === 0xa0 ? 1 : 0; // [0] version
  i += 3; // serialNumber, signature, issuer
  i += 1; // validity
  const subject = parts[i];
  if (!subject || subject.tag !== SEQ) throw new Error('DER: no subject');
  const out: CertFields = { subject: [], emails: [], dns: [], uris: [], extensions: new Map() };
  for (const rdn of children(subject.content)) {
    for (const atv of children(rdn.content)) {
      const [type, value] = children(atv.content);
      if (type?.tag !== OID || !value) continue;
      out.subject.push({ oid: oidText(type.content), value: derText(value) ?? value.content.toString('hex') });
    }
  }
  const exts = parts.find((p) => p.tag === 0xa3);
  if (exts) {
    const list = children(exts.content)[0];
    for (const ext of list ? children(list.content) : []) {
      const f = children(ext.content);
      const id = f[0];
      const value = f[1]?.tag === BOOL ? f[2] : f[1];
      if (id?.tag !== OID || value?.tag !== OCTETS) continue;
      out.extensions.set(oidText(id.content), value.content);
    }
  }
  const san = out.extensions.get('2.5.29.17');
  if (san) {
    for (const name of children(readTlv(san).content)) {
      const text = name.content.toString('utf8');
      if (name.tag === 0x81) out.emails.push(text);
      else if (name.tag === 0x82) out.dns.push(text);
      else if (name.tag === 0x86) out.uris.push(text);
    }
  }
  return out;
}

/** The key id of a Subject Key Identifier extension value, or of an Authority Key Identifier's [0]. */
export function keyIdOf(value: Buffer | undefined, authority: boolean): Buffer {
  if (!value) return Buffer.alloc(0);
  const t = readTlv(value);
  if (!authority) return t.tag === OCTETS ? t.content : Buffer.alloc(0);
  return children(t.content).find((c) => c.tag === 0x80)?.content ?? Buffer.alloc(0);
}

/** The revoked serial numbers (decimal) of a PEM or DER CRL; throws when it is not one. */
export function crlSerials(input: string | Buffer): string[] {
  const blocks =
    typeof input === 'string' ? pemBlocks(input).filter((b) => b.label === 'X509 CRL' || b.label === 'CRL') : [];
  const der = typeof input === 'string' ? blocks[0]?.der : input;
  if (!der) throw new Error('no X509 CRL block');
  const list = readTlv(der);
  const tbs = children(list.content)[0];
  if (list.tag !== SEQ || !tbs || tbs.tag !== SEQ) throw new Error('DER: not a CRL');
  const parts = children(tbs.content);
  let i = parts[0]?.tag === INTEGER ? 1 : 0; // version
  i += 2; // signature, issuer
  i += 1; // thisUpdate
  if (parts[i] && (parts[i]!.tag === 0x17 || parts[i]!.tag === 0x18)) i += 1; // nextUpdate
  const revoked = parts[i];
  if (!revoked || revoked.tag !== SEQ) return [];
  return children(revoked.content).map((entry) => {
    const serial = children(entry.content)[0];
    if (serial?.tag !== INTEGER) throw new Error('DER: bad revoked entry');
    return integerDecimal(serial.content);
  });
}
