/**
 * The client certificate of a request a standby forwards to the active (issue 30 part 2).
 *
 * A TLS client certificate belongs to the connection, and the standby's connection to the active is
 * its own, so a forwarded `auth/cert/login` would arrive without it. As Vault carries the peer
 * certificates inside its forwarded request, the standby sends the chain it received (DER, base64,
 * leaf first, comma-separated) in `X-Keyhold-Forwarded-Client-Cert`. This file only turns a chain
 * into that value and back; the forwarding signature (forward-signature.ts) covers the value, so the
 * active takes a chain only from a member of this cluster.
 */
import type { PeerCertificate, TlsPeer } from '../framework/context.js';

/** Header carrying the chain (set by a forwarding standby only). */
export const FORWARDED_CERT_HEADER = 'x-keyhold-forwarded-client-cert';
/** Longest chain carried (leaf, intermediates, root). */
const MAX_CHAIN = 10;

/** The DER certificates of a TLS peer, leaf first (empty without a certificate). */
export function peerChain(tls: TlsPeer | undefined): Buffer[] {
  const out: Buffer[] = [];
  let c: PeerCertificate | null | undefined = tls?.getPeerCertificate(true);
  while (c?.raw && out.length < MAX_CHAIN) {
    const raw = c.raw;
    if (out.some((o) => o.equals(raw))) break; // a self-signed certificate is its own issuer
    out.push(raw);
    c = c.issuerCertificate;
  }
  return out;
}

/** The header value of a chain ('' without a certificate). */
export function chainValue(chain: Buffer[]): string {
  return chain.map((c) => c.toString('base64')).join(',');
}

/** A TLS peer presenting the chain of a header value, as the cert auth method reads one; null when malformed. */
export function peerOfValue(value: string): TlsPeer | null {
  const chain = value.split(',').map((b) => Buffer.from(b.trim(), 'base64'));
  if (chain.length > MAX_CHAIN || chain.some((c) => c.length === 0)) return null;
  let head: PeerCertificate | undefined;
  for (let i = chain.length - 1; i >= 0; i--) head = { raw: chain[i]!, ...(head ? { issuerCertificate: head } : {}) };
  return { getPeerCertificate: () => head ?? null };
}
