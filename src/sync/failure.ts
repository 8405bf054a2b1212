/**
 * Classification of sync failures into statuses (reference sync-wire.md 1.10) and retry decisions:
 * 5xx, 408, 429 and network errors are retried with backoff; other 4xx are not.
 */
import type { SyncStatus } from './types.js';
import { GUARD_ERROR_CODE } from './network-guard.js';

/** Why one sync operation failed; the message never holds a secret value or credential. */
export class SyncFailure extends Error {
  constructor(
    readonly status: Exclude<SyncStatus, 'PENDING' | 'SYNCED' | 'UNSYNCED'>,
    message: string,
    readonly opts: { retryable?: boolean; retryAfterMs?: number; httpStatus?: number } = {},
  ) {
    super(message);
    this.name = 'SyncFailure';
  }
  get retryable(): boolean {
    return this.opts.retryable ?? false;
  }
}

/** Network error codes that mean the request never reached the provider. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** A failure from an HTTP status (provider reply). */
export function failureFromStatus(httpStatus: number, what: string, detail: string, retryAfterMs?: number): SyncFailure {
  const msg = `${what}: HTTP ${httpStatus}${detail ? ` ${detail}` : ''}`;
  if (httpStatus === 429 || httpStatus === 408 || httpStatus >= 500) {
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
    const why = (err as { cause?: { name?: string } }).cause?.name === 'TimeoutError' ? 'operation timed out' : 'aborted (shutting down)';
    return new SyncFailure('UNKNOWN', `${what}: ${why}`, { retryable: true });
  }
  if (err?.code && NOT_SENT.has(err.code)) return new SyncFailure('EXTERNAL_SERVICE_ERROR', `${what}: network error ${err.code}`, { retryable: true });
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
