import { describe, expect, it } from 'vitest';
import { describeTarget, judge, median, percentile, ratioOf, round } from '../../../bench/lib/stats.js';

describe('bench stats', () => {
  it('takes the middle value of an odd-length list regardless of order', () => {
    expect(median([5, 1, 3])).toBe(3);
  });

  it('averages the two middle values of an even-length list', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('ignores missing and non-finite figures and gives null when nothing is left', () => {
    expect(median([null, 2, Number.NaN, 4, undefined])).toBe(3);
    expect(median([])).toBeNull();
  });

  it('computes nearest-rank percentiles on unsorted samples', () => {
    const xs = Float64Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 99)).toBeNull();
  });

  it('gives ratio = value / baseline for throughputs and durations alike', () => {
    expect(ratioOf(7000, 10000)).toBeCloseTo(0.7);
    expect(ratioOf(65, 50)).toBeCloseTo(1.3);
  });

  it('gives no ratio when a side is missing or the baseline is zero', () => {
    expect(ratioOf(null, 10)).toBeNull();
    expect(ratioOf(10, null)).toBeNull();
    expect(ratioOf(10, 0)).toBeNull();
  });

  it('passes only when every check holds, at the limit included', () => {
    const checks = [
      { on: 'ratio', op: '>=', limit: 0.7 },
      { on: 'p99_ms', op: '<=', limit: 2 },
    ];
    expect(judge(checks, { ratio: 0.7, p99_ms: 2 })).toEqual({ pass: true, failed: [] });
    expect(judge(checks, { ratio: 0.69, p99_ms: 1 })).toEqual({ pass: false, failed: ['ratio >= 0.7'] });
    expect(judge(checks, { ratio: 0.9, p99_ms: 2.01 })).toEqual({ pass: false, failed: ['p99_ms <= 2'] });
  });

  it('fails a check whose figure is missing', () => {
    expect(judge([{ on: 'ratio', op: '<=', limit: 1.3 }], { ratio: null }).pass).toBe(false);
    expect(judge([], {}).pass).toBe(false);
  });

  it('describes a target as its checks', () => {
    expect(
      describeTarget([
        { on: 'ratio', op: '>=', limit: 0.5 },
        { on: 'peak_rss_mb', op: '<=', limit: 150 },
      ]),
    ).toBe('ratio >= 0.5; peak_rss_mb <= 150');
  });

  it('rounds to significant digits without losing small ratios', () => {
    expect(round(12345.678)).toBe(12346);
    expect(round(0.012345)).toBe(0.01235);
    expect(round(0.7049, 3)).toBe(0.705);
    expect(round(null)).toBeNull();
  });
});
