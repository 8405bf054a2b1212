/** Rate limits as GitHub documents them (REST API "Rate limits"): which replies are throttling and how long to wait. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMIT_WAIT_MS, rateLimitOf } from '../../../src/sync/failure.js';
import { failureOf } from '../../../src/sync/http-client.js';

const now = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('rateLimitOf', () => {
  it('403 with retry-after (secondary limit): wait those seconds', () => {
    expect(rateLimitOf(403, { 'retry-after': '30' }, '{}', now)).toEqual({ limited: true, retryAfterMs: 30_000 });
  });
  it('403 with x-ratelimit-remaining 0 (primary limit): wait until x-ratelimit-reset', () => {
    const reset = String(now / 1000 + 90);
    expect(rateLimitOf(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset }, '{}', now)).toEqual({
      limited: true,
      retryAfterMs: 90_000,
    });
  });
  it('403 naming a secondary rate limit without headers: one minute', () => {
    expect(rateLimitOf(403, {}, '{"message":"You have exceeded a secondary rate limit."}', now)).toEqual({
      limited: true,
      retryAfterMs: DEFAULT_RATE_LIMIT_WAIT_MS,
    });
  });
  it('a plain 403 (missing permission) is not a rate limit, and stays a CLIENT_SIDE_ERROR', () => {
    expect(
      rateLimitOf(
        403,
        { 'x-ratelimit-remaining': '4999' },
        '{"message":"Resource not accessible by personal access token"}',
        now,
      ),
    ).toEqual({ limited: false });
    const f = failureOf(
      { status: 403, headers: {}, text: '{"message":"Resource not accessible"}' },
      'put secret',
      () => 'Resource not accessible',
      now,
    );
    expect(f.status).toBe('CLIENT_SIDE_ERROR');
    expect(f.retryable).toBe(false);
  });
  it('a rate-limited 403 becomes a retryable EXTERNAL_SERVICE_ERROR marked rateLimited', () => {
    const f = failureOf({ status: 403, headers: { 'retry-after': '5' }, text: '{}' }, 'put secret', () => '', now);
    expect(f.status).toBe('EXTERNAL_SERVICE_ERROR');
    expect(f.retryable).toBe(true);
    expect(f.opts).toMatchObject({ rateLimited: true, retryAfterMs: 5_000 });
    expect(f.message).toMatch(/rate limited/);
  });
});
