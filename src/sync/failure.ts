/**
 * Classification of sync failures into statuses (reference sync-wire.md 1.10) and retry decisions:
 * 5xx, 408, 429, rate limits answered with 403 (GitHub), provider-declared transient conflicts and
 * network errors are retried with backoff; other 4xx are not.
 */
import type { SyncStatus } from './types.js';
import { GUARD_ERROR_CODE } from './network-guard.js';

/** Why one sync operation failed; the message never holds a secret value or credential. */
export class SyncFailure extends Error {
  constructor(
    readonly status: Exclude<SyncStatus, 'PENDING' | 'SYNCING' | 'UNSYNCING' | 'SYNCED' | 'UNSYNCED'>,
    message: string,
    readonly opts: {
      retryable?: boolean;
      retryAfterMs?: number;
      httpStatus?: number;
      /** The provider throttled us: every operation of the destination waits `retryAfterMs`, not only this one. */
      rateLimited?: boolean;
    } = {},
  ) {
    super(message);
    this.name = 'SyncFailure';
  }
  get retryable(): boolean {
    return this.opts.retryable ?? false;
  }
}

/** Network error codes that mean the request never reached the provider. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** A failure from an HTTP status (provider reply); `rateLimited` marks a throttling answer whatever its status. */
export function failureFromStatus(
  httpStatus: number,
  what: string,
  detail: string,
  retryAfterMs?: number,
  rateLimited = false,
): SyncFailure {
  const msg = `${what}: HTTP ${httpStatus}${detail ? ` ${detail}` : ''}${rateLimited ? ' (rate limited)' : ''}`;
  if (rateLimited || httpStatus === 429) {
    return new SyncFailure('EXTERNAL_SERVICE_ERROR', msg, {
      retryable: true,
      retryAfterMs,
      httpStatus,
      rateLimited: true,
    });
  }
  if (httpStatus === 408 || httpStatus >= 500) {
    return new SyncFailure('EXTERNAL_SERVICE_ERROR', msg, { retryable: true, retryAfterMs, httpStatus });
  }
  return new SyncFailure('CLIENT_SIDE_ERROR', msg, { retryable: false, httpStatus });
}

/** A failure from a thrown error (network, timeout, guard, bug). */
export function failureFromError(e: unknown, what: string): SyncFailure {
  if (e instanceof SyncFailure) return e;
  const err = e as NodeJS.ErrnoException & { name?: string };
  if (err?.code === GUARD_ERROR_CODE) return new SyncFailure('CLIENT_SIDE_ERROR', `${what}: ${err.message}`);
  if (err?.name === 'TimeoutError' || err?.code === 'EKEYHOLD_TIMEOUT') {
    // The request may or may not have been applied: the external state is unknown until the retry.
    return new SyncFailure('UNKNOWN', `${what}: no answer within the timeout`, { retryable: true });
  }
  if (err?.name === 'AbortError') {
    const why =
      (err as { cause?: { name?: string } }).cause?.name === 'TimeoutError'
        ? 'operation timed out'
        : 'aborted (shutting down)';
    return new SyncFailure('UNKNOWN', `${what}: ${why}`, { retryable: true });
  }
  if (err?.code && NOT_SENT.has(err.code))
    return new SyncFailure('EXTERNAL_SERVICE_ERROR', `${what}: network error ${err.code}`, { retryable: true });
  return new SyncFailure('INTERNAL_VAULT_ERROR', `${what}: ${String(err?.message ?? e).slice(0, 200)}`);
}

/** Parse Retry-After (seconds or HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/** Wait asked for when a provider throttles without saying how long (GitHub: "wait at least one minute"). */
export const DEFAULT_RATE_LIMIT_WAIT_MS = 60_000;

/**
 * Whether a reply is a rate limit, and how long the provider asks to wait (ms; undefined when it
 * does not say). GitHub answers primary and secondary rate limits with 403 or 429 and either
 * `retry-after` (seconds) or `x-ratelimit-remaining: 0` with `x-ratelimit-reset` (UTC epoch
 * seconds); a secondary limit may carry neither, only its message, and then one minute is the wait
 * GitHub documents (docs.github.com, "Rate limits for the REST API", "Exceeding the rate limit").
 */
export function rateLimitOf(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  bodyText: string,
  now: number,
): { limited: boolean; retryAfterMs?: number } {
  if (status !== 403 && status !== 429) return { limited: false };
  const header = (n: string) => {
    const v = headers[n];
    return Array.isArray(v) ? v[0] : v;
  };
  const retryAfter = parseRetryAfter(header('retry-after'), now);
  if (retryAfter !== undefined) return { limited: true, retryAfterMs: retryAfter };
  if (header('x-ratelimit-remaining')?.trim() === '0') {
    const reset = Number(header('x-ratelimit-reset'));
    return {
      limited: true,
      retryAfterMs: Number.isFinite(reset) && reset > 0 ? Math.max(0, reset * 1000 - now) : DEFAULT_RATE_LIMIT_WAIT_MS,
    };
  }
  if (status === 429) return { limited: true };
  if (/secondary rate limit|rate limit exceeded|abuse detection/i.test(bodyText.slice(0, 2000)))
    return { limited: true, retryAfterMs: DEFAULT_RATE_LIMIT_WAIT_MS };
  return { limited: false };
}
