/** Retry timing: exponential backoff with jitter, honouring a provider's Retry-After. */

/** Backoff settings. */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
  /** Retries with exponential backoff; later retries of a failure that can pass wait `maxMs` each (self-healing). */
  maxAttempts: number;
}

/**
 * Delay before attempt `attempt + 1` (attempt counts from 1): "equal jitter", i.e. half the
 * exponential step plus a random half, so retries of many links spread out; a Retry-After wins when
 * it asks for longer (capped at maxMs).
 */
export function backoffDelay(
  policy: BackoffPolicy,
  attempt: number,
  random: () => number,
  retryAfterMs?: number,
): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  const jittered = exp / 2 + random() * (exp / 2);
  if (retryAfterMs !== undefined) return Math.min(policy.maxMs, Math.max(retryAfterMs, jittered / 4));
  return Math.round(jittered);
}

/**
 * Delay before retrying a failure that can pass, after `attempts` attempts (self-healing, issue
 * 19): the first `maxAttempts` retries back off exponentially; later ones wait the maximum delay
 * each time (the reconciliation pace), never giving up while the link is due.
 */
export function retryDelay(
  policy: BackoffPolicy,
  attempts: number,
  failure: { retryAfterMs?: number },
  random: () => number,
): number {
  if (attempts < policy.maxAttempts) return backoffDelay(policy, attempts, random, failure.retryAfterMs);
  return Math.max(policy.maxMs, Math.min(failure.retryAfterMs ?? 0, policy.maxMs));
}
