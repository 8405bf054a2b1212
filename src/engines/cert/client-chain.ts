/**
 * The TLS client certificate chain of a cert-auth login, checked as Vault's builtin/credential/cert
 * path_login.go does with crypto/x509: the leaf is trusted when it is one of a role's non-CA
 * certificates byte for byte, or when a path leads from it, through the intermediates the client
 * sent, to one of a role's CA certificates; every certificate on the path must be within its
 * validity window; the leaf must allow client authentication (no extended key usage, or clientAuth,
 * or anyExtendedKeyUsage). Signatures are checked with node:crypto; no HTTP and no storage here.
 */
import { X509Certificate } from 'node:crypto';
import type { PeerCertificate, TlsPeer } from '../../framework/context.js';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';
/** Longest path we follow (leaf, intermediates, root). */
const MAX_DEPTH = 8;

/** The client's certificates, leaf first (empty without a TLS connection or certificate). */
export function presentedChain(tls: TlsPeer | undefined): X509Certificate[] {
  if (!tls) return [];
  const out: X509Certificate[] = [];
  const seen = new Set<string>();
  let c: PeerCertificate | null | undefined = tls.getPeerCertificate(true);
  while (c?.raw && out.length < MAX_DEPTH + 2) {
    const key = c.raw.toString('base64');
    if (seen.has(key)) break; // a self-signed certificate points at itself
    seen.add(key);
    out.push(new X509Certificate(c.raw));
    c = c.issuerCertificate;
  }
  return out;
}

/** Every certificate in a PEM bundle (400-worthy errors are the caller's). */
export function parsePemBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

/** Within its validity window at `now` (ms). */
export function currentlyValid(c: X509Certificate, now: number): boolean {
  return Date.parse(c.validFrom) <= now && now <= Date.parse(c.validTo);
}

/** `child` was issued and signed by `parent`. */
function signedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

/** The leaf may be used for TLS client authentication. */
export function allowsClientAuth(leaf: X509Certificate): boolean {
  const eku = leaf.keyUsage;
  return eku === undefined || eku.length === 0 || eku.includes(CLIENT_AUTH) || eku.includes(ANY_EKU);
}

/**
 * The path from the leaf to `anchor` (leaf first, anchor last) through `intermediates`, or null.
 * An anchor that is not a CA is trusted only as the leaf itself.
 */
export function pathTo(
  leaf: X509Certificate,
  intermediates: X509Certificate[],
  anchor: X509Certificate,
  now: number,
): X509Certificate[] | null {
  if (!currentlyValid(leaf, now)) return null;
  if (!anchor.ca) return leaf.raw.equals(anchor.raw) ? [leaf] : null;
  if (!currentlyValid(anchor, now)) return null;
  const walk = (current: X509Certificate, path: X509Certificate[]): X509Certificate[] | null => {
    if (signedBy(current, anchor)) return [...path, anchor];
    if (path.length >= MAX_DEPTH) return null;
    for (const i of intermediates) {
      if (!i.ca || path.some((p) => p.raw.equals(i.raw)) || !currentlyValid(i, now) || !signedBy(current, i)) continue;
      const found = walk(i, [...path, i]);
      if (found) return found;
    }
    return null;
  };
  return walk(leaf, [leaf]);
}
