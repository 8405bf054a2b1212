/**
 * Proof that a request was forwarded by a member of this cluster (issue 28 part 1).
 *
 * A standby applies the rate-limit quotas to a request before it forwards it (quota-stage.ts), so
 * the active must not count it again (it would count it under the standby's address: every client
 * behind a standby would share one bucket there, and each would burn its quota twice as fast). The
 * standby therefore adds `X-Keyhold-Forward-Proof: v1.<epoch ms>.<hmac>`, an HMAC-SHA256 under a
 * key only cluster members hold (derived from the barrier-protected X-Vault-Index key) over the
 * forwarding node's id (the `X-Keyhold-Forwarded-By` value), the method, the request target, the
 * timestamp and the body bytes. The active skips counting only for a valid, fresh proof; a plain
 * client cannot produce one, so a forged or replayed-elsewhere header is ignored and the request is
 * counted as usual.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying the proof (set by the forwarding standby, checked by the quota stage). */
export const FORWARD_PROOF_HEADER = 'x-keyhold-forward-proof';

/** How far a proof's timestamp may be from the checking node's clock (nodes' clock skew included). */
export const FORWARD_PROOF_MAX_AGE_MS = 30_000;

const VERSION = 'v1';
const MAC_HEX_LENGTH = 64;

/** The proof key from the cluster's index key (a separate key: an index MAC never serves as a proof). */
export function deriveForwardKey(indexKey: Buffer): Buffer {
  return createHmac('sha256', indexKey).update('keyhold forward proof v1').digest();
}

/** The header value for a request `nodeId` forwards now. `method` as the router sees it (LOCK is LIST). */
export function signForward(
  key: Buffer,
  nodeId: string,
  method: string,
  url: string,
  body: Buffer,
  now: number,
): string {
  const ts = String(now);
  return `${VERSION}.${ts}.${mac(key, nodeId, method, url, ts, body).toString('hex')}`;
}

/**
 * True when `value` proves that the node named by `forwardedBy` forwarded exactly this request
 * (method, target, body) within FORWARD_PROOF_MAX_AGE_MS of `now`.
 */
export function verifyForward(
  key: Buffer,
  value: string | string[] | undefined,
  forwardedBy: string | string[] | undefined,
  method: string,
  url: string,
  body: Buffer,
  now: number,
): boolean {
  if (typeof value !== 'string' || typeof forwardedBy !== 'string' || forwardedBy === '') return false;
  const dot1 = value.indexOf('.');
  const dot2 = value.indexOf('.', dot1 + 1);
  if (dot1 < 0 || dot2 < 0 || value.slice(0, dot1) !== VERSION) return false;
  const ts = value.slice(dot1 + 1, dot2);
  const hex = value.slice(dot2 + 1);
  if (!/^\d{1,16}$/.test(ts) || hex.length !== MAC_HEX_LENGTH || !/^[0-9a-f]+$/.test(hex)) return false;
  if (Math.abs(now - Number(ts)) > FORWARD_PROOF_MAX_AGE_MS) return false;
  const want = mac(key, forwardedBy, method, url, ts, body);
  return timingSafeEqual(Buffer.from(hex, 'hex'), want);
}

function mac(key: Buffer, nodeId: string, method: string, url: string, ts: string, body: Buffer): Buffer {
  // node:http sees LIST as LOCK (list-verb.ts), the fast lane as LIST: both sides sign LIST.
  const m = method === 'LOCK' ? 'LIST' : method;
  return createHmac('sha256', key)
    .update(`${VERSION}\n${nodeId.length}:${nodeId}\n${m}\n${url.length}:${url}\n${ts}\n`)
    .update(body)
    .digest();
}
