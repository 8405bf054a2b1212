import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { backoffDelay } from '../../../src/sync/backoff.js';
import { crc32c } from '../../../src/sync/crc32c.js';
import { crc32cBitwise } from '../../fakes/google.js';
import { failureFromError, failureFromStatus, parseRetryAfter } from '../../../src/sync/failure.js';
import { NetworkGuardError } from '../../../src/sync/network-guard.js';

const policy = { baseMs: 1000, maxMs: 60_000, maxAttempts: 10 };

describe('backoff', () => {
  it('doubles per attempt within [half, full] of the step (equal jitter)', () => {
    for (let a = 1; a <= 5; a++) {
      const step = 1000 * 2 ** (a - 1);
      expect(backoffDelay(policy, a, () => 0)).toBe(step / 2);
      expect(backoffDelay(policy, a, () => 1)).toBe(step);
    }
  });
  it('is capped at maxMs', () => {
    expect(backoffDelay(policy, 40, () => 1)).toBe(60_000);
  });
  it('waits at least as long as Retry-After asks, capped', () => {
    expect(backoffDelay(policy, 1, () => 0, 7000)).toBe(7000);
    expect(backoffDelay(policy, 1, () => 0, 10 * 60_000)).toBe(60_000);
  });
  it('parses Retry-After seconds and HTTP dates', () => {
    expect(parseRetryAfter('3', 0)).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
  });
});

describe('CRC-32C', () => {
  it('matches the check value of the Castagnoli polynomial', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(32))).toBe(0x8a9136aa); // RFC 3720 B.4: 32 bytes of zeros
    expect(crc32c(Buffer.alloc(32, 0xff))).toBe(0x62a8ab43); // RFC 3720 B.4: 32 bytes of 0xff
  });
  it('agrees with an independent bitwise implementation', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (b) => crc32c(b) === crc32cBitwise(b)),
      { numRuns: 300 },
    );
  });
});

describe('failure classification', () => {
  it('retries 5xx, 408 and 429 as EXTERNAL_SERVICE_ERROR, not other 4xx', () => {
    for (const s of [500, 502, 503, 408, 429])
      expect(failureFromStatus(s, 'x', '')).toMatchObject({ status: 'EXTERNAL_SERVICE_ERROR', retryable: true });
    for (const s of [400, 401, 403, 404, 409, 422])
      expect(failureFromStatus(s, 'x', '')).toMatchObject({ status: 'CLIENT_SIDE_ERROR', retryable: false });
  });
  it('classifies network errors, timeouts and guard refusals', () => {
    expect(failureFromError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), 'x')).toMatchObject({
      status: 'EXTERNAL_SERVICE_ERROR',
      retryable: true,
    });
    expect(failureFromError(Object.assign(new Error('x'), { code: 'EKEYHOLD_TIMEOUT' }), 'x')).toMatchObject({
      status: 'UNKNOWN',
      retryable: true,
    });
    expect(failureFromError(new NetworkGuardError('blocked'), 'x')).toMatchObject({
      status: 'CLIENT_SIDE_ERROR',
      retryable: false,
    });
    expect(failureFromError(new TypeError('bug'), 'x')).toMatchObject({
      status: 'INTERNAL_VAULT_ERROR',
      retryable: false,
    });
  });
});

describe('AWS error classification', async () => {
  const { classifyAwsError } = await import('../../../src/sync/destinations/provider-a-sm.js');
  const awsErr = (name: string, status: number, message = '') =>
    Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });
  it('retries throttling and service errors whatever the status', () => {
    expect(classifyAwsError(awsErr('ThrottlingException', 400), 'x')).toMatchObject({
      status: 'EXTERNAL_SERVICE_ERROR',
      retryable: true,
    });
    expect(classifyAwsError(awsErr('InternalServiceError', 500), 'x')).toMatchObject({
      status: 'EXTERNAL_SERVICE_ERROR',
      retryable: true,
    });
  });
  it('treats auth and validation errors as client-side, not retried', () => {
    expect(classifyAwsError(awsErr('AccessDeniedException', 400), 'x')).toMatchObject({
      status: 'CLIENT_SIDE_ERROR',
      retryable: false,
    });
    expect(classifyAwsError(awsErr('UnrecognizedClientException', 400), 'x').message).toBe(
      'x: HTTP 400 UnrecognizedClientException',
    );
  });
  it('retries a name still scheduled for deletion', () => {
    expect(
      classifyAwsError(
        awsErr(
          'InvalidRequestException',
          400,
          "You can't create this secret because a secret with this name is already scheduled for deletion.",
        ),
        'x',
      ),
    ).toMatchObject({ retryable: true });
  });
  it('missing credentials from the default chain are a configuration problem', () => {
    const e = Object.assign(new Error('Could not load credentials from any providers'), {
      name: 'CredentialsProviderError',
    });
    expect(classifyAwsError(e, 'PutSecretValue')).toMatchObject({ status: 'CLIENT_SIDE_ERROR', retryable: false });
  });
});

describe('operation timeout', () => {
  it('an aborted request reports UNKNOWN naming the operation timeout', () => {
    const e = Object.assign(new Error('The operation was aborted'), {
      name: 'AbortError',
      cause: Object.assign(new Error('operation timed out'), { name: 'TimeoutError' }),
    });
    expect(failureFromError(e, 'put')).toMatchObject({
      status: 'UNKNOWN',
      retryable: true,
      message: 'put: operation timed out',
    });
  });
});
