/**
 * The signature of a request a standby forwards to the active (issues 28 and 30): one key, one
 * header, checked once on the active.
 *
 * Every request a standby forwards carries `X-Keyhold-Forward-Sig: v1:<epoch ms>:<nonce>:<hmac>`,
 * an HMAC-SHA256 under `core/forwarding-hmac-key` (32 random bytes the first active creates behind
 * the barrier: only unsealed nodes of this cluster can read it) over the sending node (its
 * `X-Keyhold-Forwarded-By`), the active node it is meant for, the method, the URL, the SHA-256 of
 * the body, the timestamp, a random nonce, the client's address as the standby saw it
 * (`X-Keyhold-Forwarded-For`) and the client certificate chain it carries in
 * `X-Keyhold-Forwarded-Client-Cert` (forwarded-cert.ts; empty without one). What the active learns
 * from a valid signature:
 * - the request comes from a member of this cluster, which applied the rate-limit quotas to it
 *   already (quota-stage.ts: the active does not count it a second time);
 * - the client's address, which the active then uses as the request's own (token_bound_cidrs and
 *   the login methods' bound CIDRs, audit `remote_address`), as Vault does for forwarded requests;
 * - the chain is the certificate the client presented to that member (cert auth logs in with it).
 *
 * A signature is taken when it verifies, names this node as the recipient, is at most 30 s from
 * this node's clock and its nonce was not seen in the last minute. Anything else carrying the
 * signature or the chain header is refused with a 400 naming the header: a client can neither skip
 * a quota nor present a certificate it does not hold the key of, and a captured forwarded request
 * cannot be replayed. A request with neither header pays nothing (no crypto, no allocation).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { invalid, type KeyholdError } from '../framework/errors.js';
import type { TlsPeer } from '../framework/context.js';
import type { Storage } from '../storage/backend.js';
import { FORWARDED_CERT_HEADER, peerOfValue } from './forwarded-cert.js';

/** The signature header (set by a forwarding standby only). */
export const FORWARD_SIG_HEADER = 'x-keyhold-forward-sig';
/** The client's address as the forwarding standby saw it (taken only with a valid signature). */
export const FORWARDED_FOR_HEADER = 'x-keyhold-forwarded-for';
/** Names the forwarding node (also the loop guard of forward.ts). */
export const FORWARDED_BY_HEADER = 'x-keyhold-forwarded-by';
/** How far a signature's timestamp may be from the checking node's clock (clock skew included). */
export const FORWARD_SIG_MAX_AGE_MS = 30_000;
/** Where the key lives, behind the barrier. */
export const FORWARDING_KEY_PATH = 'core/forwarding-hmac-key';

const VERSION = 'v1';
const SHOWN = { sig: 'X-Keyhold-Forward-Sig', cert: 'X-Keyhold-Forwarded-Client-Cert' };
const SIG_FORM = /^v1:(\d{1,16}):([0-9a-f]{32}):([0-9a-f]{64})$/;

/** What a signature covers besides its timestamp and nonce. */
export interface SignedRequest {
  /** As the router sees it: LOCK (node:http's spelling of LIST) is signed as LIST. */
  method: string;
  url: string;
  body: Buffer;
  /** The forwarding node's id (also in X-Keyhold-Forwarded-By). */
  from: string;
  /** The active node's id the request is meant for. */
  to: string;
  /** The X-Keyhold-Forwarded-Client-Cert value ('' without a client certificate). */
  chain: string;
  /** The client's address on the standby (`unix` for its Unix socket). */
  client: string;
}

/** What a valid signature vouches for. */
export interface AcceptedForward {
  /** The client certificate it carries, as a TLS peer (undefined without one). */
  peer: TlsPeer | undefined;
  /** The client's address on the standby. */
  client: string;
}

/** True when a request carries the signature or a forwarded certificate (a property read each). */
export function carriesForwarding(headers: IncomingHttpHeaders): boolean {
  return headers[FORWARD_SIG_HEADER] !== undefined || headers[FORWARDED_CERT_HEADER] !== undefined;
}

/**
 * The 400 for a forwarding header this node does not take, naming the certificate header when the
 * request carries one (what a client trying to inject a certificate sees), else the signature's.
 */
export function refuseForwarding(headers: IncomingHttpHeaders, why: string): KeyholdError {
  const name = headers[FORWARDED_CERT_HEADER] !== undefined ? SHOWN.cert : SHOWN.sig;
  return invalid(name, `${why}; only a keyhold node of this cluster forwarding a request may send it`);
}

function one(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

function field(s: string): string {
  return `${s.length}:${s}\n`;
}

function mac(key: Buffer, ts: string, nonce: string, r: SignedRequest): Buffer {
  const method = r.method === 'LOCK' ? 'LIST' : r.method; // list-verb.ts: both sides sign LIST
  const bodyDigest = createHash('sha256').update(r.body).digest('hex');
  return createHmac('sha256', key)
    .update(`keyhold forwarded request ${VERSION}\n${ts}\n${nonce}\n`)
    .update(field(r.from) + field(r.to) + field(method) + field(r.url) + bodyDigest + '\n')
    .update(field(r.chain) + field(r.client))
    .digest();
}

/** The cluster's forwarding key and the nonces seen: one per node; standbys sign, the active verifies. */
export class ForwardSignature {
  private key: Buffer | null = null;
  /** Nonces taken in the last 2 x max age, oldest first (a Map keeps insertion order). */
  private readonly seen = new Map<string, number>();

  constructor(private readonly barrier: Storage) {}

  /** The active makes sure the key exists (the first active of a cluster creates it). */
  async ensureKey(): Promise<void> {
    if (await this.loadKey()) return;
    const k = randomBytes(32);
    await this.barrier.put(FORWARDING_KEY_PATH, k);
    this.key = k;
  }

  /** The key, read from the barrier once it exists (null before the first active created it). */
  async loadKey(): Promise<Buffer | null> {
    if (!this.key) this.key = await this.barrier.get(FORWARDING_KEY_PATH);
    return this.key;
  }

  /** Sealing: the key leaves memory (read again after the next unseal). */
  forget(): void {
    this.key = null;
    this.seen.clear();
  }

  /**
   * The headers a standby adds to a request it forwards: the signature, and the chain when the
   * client presented a certificate (`r.chain`). None before the cluster has a key (or when the
   * barrier cannot be read): the active then treats the request as any client's (counted, no chain).
   */
  async sign(r: SignedRequest): Promise<Record<string, string>> {
    const key = await this.loadKey().catch(() => null);
    if (!key) return {};
    const ts = String(Date.now());
    const nonce = randomBytes(16).toString('hex');
    const out: Record<string, string> = {
      [FORWARD_SIG_HEADER]: `${VERSION}:${ts}:${nonce}:${mac(key, ts, nonce, r).toString('hex')}`,
    };
    out[FORWARDED_FOR_HEADER] = r.client;
    if (r.chain) out[FORWARDED_CERT_HEADER] = r.chain;
    return out;
  }

  /**
   * On the node a standby forwarded to (`self`): when the request carries a valid, fresh, unseen
   * signature made for this node over exactly this request, client address and chain, resolves to
   * the forwarded client certificate as a TLS peer (undefined without one) and the client's address;
   * otherwise throws the 400 naming the header. Constant-time comparison; the nonce is recorded
   * only once the MAC holds.
   */
  async verify(
    headers: IncomingHttpHeaders,
    r: Pick<SignedRequest, 'method' | 'url' | 'body'>,
    self: string,
  ): Promise<AcceptedForward> {
    const refuse = (why: string) => refuseForwarding(headers, why);
    const sigText = one(headers, FORWARD_SIG_HEADER);
    if (sigText === undefined) throw refuse(`sent without ${SHOWN.sig}`);
    const m = SIG_FORM.exec(sigText);
    if (!m) throw refuse(`${SHOWN.sig} is malformed`);
    const [, ts, nonce, sigHex] = m as unknown as [string, string, string, string];
    const now = Date.now();
    if (Math.abs(now - Number(ts)) > FORWARD_SIG_MAX_AGE_MS) throw refuse('the signature is too old');
    const from = one(headers, FORWARDED_BY_HEADER) ?? '';
    if (!from) throw refuse('sent without X-Keyhold-Forwarded-By');
    const key = await this.loadKey().catch(() => null);
    if (!key) throw refuse('this cluster has no forwarding key');
    const chain = one(headers, FORWARDED_CERT_HEADER) ?? '';
    const client = one(headers, FORWARDED_FOR_HEADER);
    if (client === undefined || client === '') throw refuse('sent without X-Keyhold-Forwarded-For');
    const want = mac(key, ts, nonce, { ...r, from, to: self, chain, client });
    if (!timingSafeEqual(Buffer.from(sigHex, 'hex'), want)) throw refuse('the signature does not verify');
    this.prune(now);
    if (this.seen.has(nonce)) throw refuse('the request was replayed');
    this.seen.set(nonce, now);
    if (!chain) return { peer: undefined, client };
    const peer = peerOfValue(chain);
    if (!peer) throw refuse('the chain is malformed');
    return { peer, client };
  }

  /** Drop the nonces that can no longer pass the age check (taken more than 2 x max age ago). */
  private prune(now: number): void {
    for (const [n, at] of this.seen) {
      if (now - at <= 2 * FORWARD_SIG_MAX_AGE_MS) break;
      this.seen.delete(n);
    }
  }
}
