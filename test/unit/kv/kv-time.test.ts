import { describe, expect, it } from 'vitest';
import { formatRfc3339Nano, goDuration, nowNanos, parseRfc3339 } from '../../../src/engines/kv/kv-time.js';

describe('formatRfc3339Nano', () => {
  it('prints nine fraction digits when all are significant', () => {
    expect(formatRfc3339Nano(1521685446945319214n)).toBe('2018-03-22T02:24:06.945319214Z');
  });

  it('trims trailing zeros like Go RFC3339Nano', () => {
    expect(formatRfc3339Nano(1521685446945300000n)).toBe('2018-03-22T02:24:06.9453Z');
  });

  it('omits the fraction on a whole second', () => {
    expect(formatRfc3339Nano(1521685446000000000n)).toBe('2018-03-22T02:24:06Z');
  });

  it('agrees with Date.toISOString to the millisecond', () => {
    const ms = Date.UTC(2031, 11, 31, 23, 59, 59, 7);
    const s = formatRfc3339Nano(BigInt(ms) * 1_000_000n + 123_456n);
    expect(s).toBe('2031-12-31T23:59:59.007123456Z');
    expect(parseRfc3339(s)).toBe(ms);
  });

  it('takes milliseconds from the injected clock', () => {
    const ns = nowNanos({ now: () => 1_000 });
    expect(ns / 1_000_000n).toBe(1000n);
  });
});

describe('goDuration', () => {
  it.each([
    [0, '0s'],
    [-1, '-1s'],
    [90, '1m30s'],
    [3600, '1h0m0s'],
    [2_592_000, '720h0m0s'],
  ])('formats %i seconds as %s', (s, want) => {
    expect(goDuration(s)).toBe(want);
  });
});
