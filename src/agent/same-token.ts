/**
 * Whether two tokens are the same, in constant time (a proxied request may carry a caller's token,
 * compared here with the agent's own: no timing may tell how much of it matched).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** Same non-empty token (digests compared, so lengths do not leak either). */
export function sameToken(a: string | null | undefined, b: string | null | undefined): boolean {
  if (!a || !b) return false;
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
