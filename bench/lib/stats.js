/**
 * Pure arithmetic of the benchmark: medians, percentiles, ratios against a same-run baseline and
 * the pass/fail judgement of a case. No I/O here, so it is unit-tested (test/unit/bench/).
 */

/** Median of a list of numbers (mean of the two middle values for even lengths); null when empty. */
export function median(values) {
  const xs = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = xs.length >> 1;
  return xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

/** Nearest-rank percentile (p in 0..100) of an array or typed array of samples; null when empty. */
export function percentile(samples, p) {
  const n = samples.length;
  if (n === 0) return null;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.min(n, Math.max(1, Math.ceil((p / 100) * n)));
  return sorted[rank - 1];
}

/** Arithmetic mean; null when empty. */
export function mean(samples) {
  if (samples.length === 0) return null;
  let s = 0;
  for (const v of samples) s += v;
  return s / samples.length;
}

/**
 * Ratio of a case against its baseline, as the issue defines it: value / baseline for both
 * throughputs ("higher is better": keyhold req/s over bare req/s) and durations ("lower is
 * better": keyhold time over baseline time). Null when either side is missing or the baseline is 0.
 */
export function ratioOf(value, baseline) {
  if (
    typeof value !== 'number' ||
    typeof baseline !== 'number' ||
    !Number.isFinite(value) ||
    !Number.isFinite(baseline) ||
    baseline === 0
  )
    return null;
  return value / baseline;
}

/**
 * Judge a case against its target. A target is a list of checks, each
 * `{ on: 'ratio' | 'value' | <detail key>, op: '>=' | '<=', limit }`; every check must hold and a
 * missing figure fails. Returns `{ pass, failed: [human-readable check] }`.
 */
export function judge(checks, figures) {
  const failed = [];
  for (const c of checks) {
    const v = figures[c.on];
    const ok = typeof v === 'number' && Number.isFinite(v) && (c.op === '>=' ? v >= c.limit : v <= c.limit);
    if (!ok) failed.push(`${c.on} ${c.op} ${c.limit}`);
  }
  return { pass: checks.length > 0 && failed.length === 0, failed };
}

/** Human-readable form of a target's checks, e.g. "ratio >= 0.7; p99_ms <= 2". */
export function describeTarget(checks) {
  return checks.map((c) => `${c.on} ${c.op} ${c.limit}`).join('; ');
}

/** Round to a few significant digits for the table and JSON (keeps small ratios readable). */
export function round(v, digits = 4) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return v ?? null;
  if (v === 0) return 0;
  const mag = Math.floor(Math.log10(Math.abs(v)));
  const scale = 10 ** Math.max(0, digits - 1 - mag);
  return Math.round(v * scale) / scale;
}
