/**
 * The constraints of a cert role on the leaf certificate (Vault's cert path_login.go
 * matchesConstraints): allowed common names, DNS / email / URI SANs, organizational units and
 * required extensions, each a list of patterns with `*` wildcards (ryanuber/go-glob semantics:
 * `*` matches any run of characters); an empty list allows anything.
 */
import type { X509Certificate } from 'node:crypto';
import { readTlv } from '../transit/keyring/der.js';
import { certFields, derText, integerDecimal, keyIdOf } from './cert-der.js';

/** The constraint lists of a role. */
export interface CertConstraints {
  allowed_names: string[];
  allowed_common_names: string[];
  allowed_dns_sans: string[];
  allowed_email_sans: string[];
  allowed_uri_sans: string[];
  allowed_organizational_units: string[];
  required_extensions: string[];
}

/** What the constraints look at in a certificate. */
export interface LeafFacts {
  commonName: string;
  organizationalUnits: string[];
  dnsSans: string[];
  emailSans: string[];
  uriSans: string[];
  /** Extension values by dotted OID, decoded as an ASN.1 string where they are one, else hex. */
  extensions: Map<string, string>;
  serialDecimal: string;
  subjectKeyId: string;
  authorityKeyId: string;
}

/** `*`-wildcard match of the whole value. */
export function glob(pattern: string, value: string): boolean {
  if (pattern === '*') return true;
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === value;
  if (!value.startsWith(parts[0]!)) return false;
  let at = parts[0]!.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const j = value.indexOf(parts[i]!, at);
    if (j < 0) return false;
    at = j + parts[i]!.length;
  }
  const last = parts[parts.length - 1]!;
  return value.length - at >= last.length && value.endsWith(last);
}

/** Colon-separated lower-case hex, as Vault's certutil.GetHexFormatted prints key ids. */
function hexColons(hex: string): string {
  return (hex.toLowerCase().match(/../g) ?? []).join(':');
}

/** The facts of a leaf the constraints and the login metadata read. */
export function leafFacts(leaf: X509Certificate): LeafFacts {
  const c = certFields(leaf.raw);
  const extensions = new Map<string, string>();
  for (const [id, v] of c.extensions) {
    let text: string | null = null;
    try {
      text = derText(readTlv(v));
    } catch {
      text = null;
    }
    extensions.set(id, text ?? v.toString('hex'));
  }
  return {
    commonName: c.subject.find((a) => a.oid === '2.5.4.3')?.value ?? '',
    organizationalUnits: c.subject.filter((a) => a.oid === '2.5.4.11').map((a) => a.value),
    dnsSans: c.dns,
    emailSans: c.emails,
    uriSans: c.uris,
    extensions,
    serialDecimal: integerDecimal(
      Buffer.from(leaf.serialNumber.length % 2 ? `0${leaf.serialNumber}` : leaf.serialNumber, 'hex'),
    ),
    subjectKeyId: hexColons(keyIdOf(c.extensions.get('2.5.29.14'), false).toString('hex')),
    authorityKeyId: hexColons(keyIdOf(c.extensions.get('2.5.29.35'), true).toString('hex')),
  };
}

const anyOf = (patterns: string[], values: string[]) =>
  patterns.length === 0 || patterns.some((p) => values.some((v) => glob(p, v)));

/** Whether the leaf meets every constraint of the role. */
export function meetsConstraints(r: CertConstraints, f: LeafFacts): boolean {
  if (r.allowed_names.length && !anyOf(r.allowed_names, [f.commonName, ...f.dnsSans, ...f.emailSans])) return false;
  if (!anyOf(r.allowed_common_names, [f.commonName])) return false;
  if (!anyOf(r.allowed_dns_sans, f.dnsSans)) return false;
  if (!anyOf(r.allowed_email_sans, f.emailSans)) return false;
  if (!anyOf(r.allowed_uri_sans, f.uriSans)) return false;
  if (!anyOf(r.allowed_organizational_units, f.organizationalUnits)) return false;
  for (const req of r.required_extensions) {
    const i = req.indexOf(':');
    if (i <= 0) return false;
    const value = f.extensions.get(req.slice(0, i));
    if (value === undefined || !glob(req.slice(i + 1), value)) return false;
  }
  return true;
}
