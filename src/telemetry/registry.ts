/**
 * In-process metrics: counters, gauges and summaries (count and sum only: no quantiles, so an
 * observation is two additions and the hot path allocates nothing). Series are created once and
 * their handles kept by callers; rendering walks the families.
 *
 * Names are Vault's dotted keys ("vault.core.handle_request"); the Prometheus text turns dots and
 * dashes into underscores as Vault's go-metrics Prometheus sink does. Summaries are in milliseconds
 * (Vault's MeasureSince unit).
 */

/** Metric kinds (Prometheus TYPE). */
export type MetricKind = 'counter' | 'gauge' | 'summary';

/** Label names and values of one series, in a fixed order. */
export type Labels = Readonly<Record<string, string>>;

/** One series: a counter (value), a gauge (value), or a summary (count, sum). */
export class Series {
  value = 0;
  count = 0;
  sum = 0;
  min = Infinity;
  max = -Infinity;
  /** performance.now() of the last update (retention: stale series are not exported). */
  updated = 0;
  constructor(
    readonly labels: Labels,
    readonly labelText: string,
  ) {}
  /** Counter: add `n`. */
  inc(n = 1, now = performance.now()): void {
    this.value += n;
    this.updated = now;
  }
  /** Gauge: set. */
  set(v: number, now = performance.now()): void {
    this.value = v;
    this.updated = now;
  }
  /** Summary: one observation (milliseconds). */
  observe(v: number, now = performance.now()): void {
    this.count++;
    this.sum += v;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
    this.updated = now;
  }
}

/** A metric family: name, kind, help and its series by label text. */
export interface Family {
  name: string;
  kind: MetricKind;
  help: string;
  series: Map<string, Series>;
}

/** Prometheus metric name from a dotted Vault key. */
export function promName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_:]/g, '_');
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labelTextOf(labels: Labels): string {
  const keys = Object.keys(labels);
  if (keys.length === 0) return '';
  return keys.map((k) => `${promName(k)}="${escapeLabel(labels[k]!)}"`).join(',');
}

/** Number as Prometheus text (integers without a fraction; NaN/Inf spelled as the format wants). */
function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** The metrics of one daemon. */
export class MetricsRegistry {
  private readonly families = new Map<string, Family>();

  /** The series `name{labels}` of `kind`, created on first use (keep the handle on hot paths). */
  series(kind: MetricKind, name: string, help: string, labels: Labels = {}): Series {
    let fam = this.families.get(name);
    if (!fam) {
      fam = { name, kind, help, series: new Map() };
      this.families.set(name, fam);
    } else if (fam.kind !== kind) {
      throw new Error(`metric ${name} is a ${fam.kind}, not a ${kind}`);
    }
    const text = labelTextOf(labels);
    let s = fam.series.get(text);
    if (!s) {
      s = new Series({ ...labels }, text);
      fam.series.set(text, s);
    }
    return s;
  }

  counter(name: string, help: string, labels?: Labels): Series {
    return this.series('counter', name, help, labels);
  }
  gauge(name: string, help: string, labels?: Labels): Series {
    return this.series('gauge', name, help, labels);
  }
  summary(name: string, help: string, labels?: Labels): Series {
    return this.series('summary', name, help, labels);
  }

  /** Drop every series of a gauge family (before it is collected anew, so vanished labels go). */
  resetGauge(name: string): void {
    this.families.get(name)?.series.clear();
  }

  /** Families in name order. */
  list(): Family[] {
    return [...this.families.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Prometheus text exposition format (version 0.0.4). Series not updated within `retentionMs`
   * are left out (Vault's prometheus_retention_time); gauges are collected just before.
   */
  prometheus(opts: { retentionMs: number; now?: number; rename?: (name: string) => string }): string {
    const now = opts.now ?? performance.now();
    const out: string[] = [];
    for (const fam of this.list()) {
      const live = [...fam.series.values()].filter((s) => now - s.updated <= opts.retentionMs);
      if (live.length === 0) continue;
      const name = promName(opts.rename ? opts.rename(fam.name) : fam.name);
      out.push(`# HELP ${name} ${fam.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      out.push(`# TYPE ${name} ${fam.kind}`);
      for (const s of live) {
        const l = s.labelText;
        if (fam.kind === 'summary') {
          out.push(`${name}_sum${l ? `{${l}}` : ''} ${num(s.sum)}`);
          out.push(`${name}_count${l ? `{${l}}` : ''} ${num(s.count)}`);
        } else {
          out.push(`${name}${l ? `{${l}}` : ''} ${num(s.value)}`);
        }
      }
    }
    return out.length ? out.join('\n') + '\n' : '';
  }

  /**
   * Vault's in-memory sink JSON (`GET sys/metrics`): Gauges, Counters and Samples, each entry with
   * Name and Labels; counters and samples with Count, Sum, Min, Max, Mean (Rate per second of the
   * interval is not kept: keyhold reports totals since start).
   */
  json(opts: { rename?: (name: string) => string; timestamp?: Date } = {}): Record<string, unknown> {
    const gauges: unknown[] = [];
    const counters: unknown[] = [];
    const samples: unknown[] = [];
    for (const fam of this.list()) {
      const name = opts.rename ? opts.rename(fam.name) : fam.name;
      for (const s of fam.series.values()) {
        if (fam.kind === 'gauge') gauges.push({ Name: name, Value: s.value, Labels: s.labels });
        else if (fam.kind === 'counter')
          counters.push({
            Name: name,
            Count: s.value,
            Sum: s.value,
            Min: 1,
            Max: 1,
            Mean: 1,
            Stddev: 0,
            Labels: s.labels,
          });
        else
          samples.push({
            Name: name,
            Count: s.count,
            Sum: s.sum,
            Min: s.count ? s.min : 0,
            Max: s.count ? s.max : 0,
            Mean: s.count ? s.sum / s.count : 0,
            Labels: s.labels,
          });
      }
    }
    return {
      Timestamp: (opts.timestamp ?? new Date())
        .toISOString()
        .replace(/\.\d+Z$/, ' +0000 UTC')
        .replace('T', ' '),
      Gauges: gauges,
      Counters: counters,
      Samples: samples,
      Points: [],
    };
  }
}
