/**
 * The client certificate of a request a standby forwards to the active (issue 30 part 2).
 *
 * A TLS client certificate belongs to the connection, and the standby's connection to the active is
 * its own, so a forwarded `auth/cert/login` would arrive without it. As Vault carries the peer
 * certificates inside its forwarded request, the standby sends the chain it received (DER, base64,
 * leaf first) in `X-Keyhold-Forwarded-Client-Cert`, and proves with `X-Keyhold-Forwarded-Client-Cert-Sig`
 * that a node of this cluster sent it: an HMAC-SHA256, under a key only unsealed nodes can read
 * (`core/forwarding-hmac-key`, behind the barrier), of the chain, the sender, the intended active,
 * a timestamp, a nonce and the request itself (method, URL, body digest). The active takes the chain
 * only when the signature verifies, is at most 30 s old, names it as the recipient and its nonce is
 * new; anything else carrying either header is refused with a 400 naming it, on every node, so a
 * client can never present a certificate it does not hold the key of.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { invalid } from '../framework/errors.js';
import type { PeerCertificate, TlsPeer } from '../framework/context.js';
import type { Storage } from '../storage/backend.js';

export const FORWARDED_CERT_HEADER = 'x-keyhold-forwarded-client-cert';
export const FORWARDED_CERT_SIG_HEADER = 'x-keyhold-forwarded-client-cert-sig';
const KEY_PATH = 'core/forwarding-hmac-key';
/** How old a signature may be (clock skew between nodes included). */
const MAX_AGE_MS = 30_000;
/** Longest chain carried (leaf, intermediates, root). */
const MAX_CHAIN = 10;
const SHOWN = { cert: 'X-Keyhold-Forwarded-Client-Cert', sig: 'X-Keyhold-Forwarded-Client-Cert-Sig' };

/** What the signature covers besides the chain. */
export interface SignedRequest {
  method: string;
  url: string;
  body: Buffer;
  /** The forwarding node's id (also in X-Keyhold-Forwarded-By). */
  from: string;
  /** The active node's id the request is meant for. */
  to: string;
}

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

/** A TLS peer presenting `chain` (DER, leaf first), as the cert auth method reads one. */
function peerOf(chain: Buffer[]): TlsPeer {
  let head: PeerCertificate | undefined;
  for (let i = chain.length - 1; i >= 0; i--) head = { raw: chain[i]!, ...(head ? { issuerCertificate: head } : {}) };
  return { getPeerCertificate: () => head ?? null };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v.join(',') : v;
}

/** The 400 for a forwarded certificate this node does not take. */
export function refuseForwardedCert(why: string) {
  return invalid(SHOWN.cert, `${why}; only a keyhold node of this cluster forwarding a request may send it`);
}

/** True when a request carries either forwarded-certificate header. */
export function carriesForwardedCert(headers: IncomingHttpHeaders): boolean {
  return headers[FORWARDED_CERT_HEADER] !== undefined || headers[FORWARDED_CERT_SIG_HEADER] !== undefined;
}

function mac(key: Buffer, ts: string, nonce: string, chain: string, r: SignedRequest): Buffer {
  const bodyDigest = createHash('sha256').update(r.body).digest('hex');
  return createHmac('sha256', key)
    .update(
      ['keyhold-forwarded-client-cert-v1', ts, nonce, r.from, r.to, r.method, r.url, bodyDigest, chain].join('\n'),
    )
    .digest();
}

/** Signs on a standby, verifies on the active; one per cluster node. */
export class ForwardedCertTrust {
  private key: Buffer | null = null;
  /** Nonces seen within MAX_AGE_MS (a replayed request is refused). */
  private readonly seen = new Map<string, number>();

  constructor(private readonly barrier: Storage) {}

  /** The active makes sure the key exists (first active of a cluster creates it). */
  async ensureKey(): Promise<void> {
    if (await this.loadKey()) return;
    const k = randomBytes(32);
    await this.barrier.put(KEY_PATH, k);
    this.key = k;
  }

  private async loadKey(): Promise<Buffer | null> {
    if (!this.key) this.key = await this.barrier.get(KEY_PATH);
    return this.key;
  }

  /**
   * The headers a standby adds to a forwarded request whose connection presented `chain`
   * (none without a certificate, or when the cluster has no key yet: then no certificate travels).
   */
  async sign(chain: Buffer[], r: SignedRequest): Promise<Record<string, string>> {
    if (!chain.length) return {};
    const key = await this.loadKey().catch(() => null);
    if (!key) return {};
    const value = chain.map((c) => c.toString('base64')).join(',');
    const ts = String(Date.now());
    const nonce = randomBytes(16).toString('hex');
    const sig = mac(key, ts, nonce, value, r).toString('hex');
    return { [FORWARDED_CERT_HEADER]: value, [FORWARDED_CERT_SIG_HEADER]: `v1:${ts}:${nonce}:${sig}` };
  }

  /**
   * On the active: the forwarded client certificate as a TLS peer, or a 400 naming the header when
   * the request did not come signed from a node of this cluster (`self`: this node's id).
   */
  async accept(headers: IncomingHttpHeaders, r: Omit<SignedRequest, 'to' | 'from'>, self: string): Promise<TlsPeer> {
    const value = header(headers, FORWARDED_CERT_HEADER);
    const sigText = header(headers, FORWARDED_CERT_SIG_HEADER);
    const from = header(headers, 'x-keyhold-forwarded-by') ?? '';
    const refuse = refuseForwardedCert;
    if (!value) throw invalid(SHOWN.sig, `sent without ${SHOWN.cert}`);
    if (!sigText) throw refuse(`sent without ${SHOWN.sig}`);
    const parts = sigText.split(':');
    if (
      parts.length !== 4 ||
      parts[0] !== 'v1' ||
      !/^\d+$/.test(parts[1]!) ||
      !/^[0-9a-f]{32}$/.test(parts[2]!) ||
      !/^[0-9a-f]{64}$/.test(parts[3]!)
    )
      throw refuse(`${SHOWN.sig} is malformed`);
    const [, ts, nonce, sigHex] = parts as [string, string, string, string];
    const key = await this.loadKey().catch(() => null);
    if (!key) throw refuse('this cluster has no forwarding key');
    const want = mac(key, ts, nonce, value, { ...r, from, to: self });
    const got = Buffer.from(sigHex, 'hex');
    if (got.length !== want.length || !timingSafeEqual(got, want)) throw refuse('the signature does not verify');
    const now = Date.now();
    if (Math.abs(now - Number(ts)) > MAX_AGE_MS) throw refuse('the signature is too old');
    // Oldest first (a Map keeps insertion order): drop what can no longer pass the age check.
    for (const [n, at] of this.seen) {
      if (now - at <= 2 * MAX_AGE_MS) break;
      this.seen.delete(n);
    }
    if (this.seen.has(nonce)) throw refuse('the request was replayed');
    this.seen.set(nonce, now);
    const chain = value.split(',').map((b) => Buffer.from(b.trim(), 'base64'));
    if (chain.length > MAX_CHAIN || chain.some((c) => c.length === 0)) throw refuse('the chain is malformed');
    return peerOf(chain);
  }
}
