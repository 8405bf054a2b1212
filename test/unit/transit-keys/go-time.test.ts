import { describe, expect, test } from 'vitest';
import { GO_ZERO_TIME, formatGoTime, parseGoTime } from '../../../src/engines/transit/keyring/go-time.js';

describe('Go time text', () => {
  test('parses an RFC 3339 time with a negative offset and microseconds (Vault docs backup sample)', () => {
    expect(parseGoTime('2017-12-08T11:50:08.613837-05:00')).toBeCloseTo(1512751808.613837, 6);
  });

  test('parses nanosecond precision and Z', () => {
    expect(parseGoTime('2025-01-02T03:04:05.123456789Z')).toBeCloseTo(
      Date.UTC(2025, 0, 2, 3, 4, 5) / 1000 + 0.123456789,
      6,
    );
  });

  test('maps Go zero time to 0 and rejects malformed text', () => {
    expect(parseGoTime(GO_ZERO_TIME)).toBe(0);
    expect(parseGoTime('yesterday')).toBeNull();
    expect(parseGoTime('2017-12-08 11:50')).toBeNull();
  });

  test('formats UTC with trimmed fractional digits and round-trips', () => {
    expect(formatGoTime(1512751808)).toBe('2017-12-08T16:50:08Z');
    expect(formatGoTime(1512751808.5)).toBe('2017-12-08T16:50:08.5Z');
    const t = 1740823200.123456;
    expect(parseGoTime(formatGoTime(t))).toBeCloseTo(t, 6);
  });
});
