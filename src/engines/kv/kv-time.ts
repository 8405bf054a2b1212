/** Time formats of the KV v2 wire: RFC 3339 with nanoseconds (Go's time.RFC3339Nano) and Go duration strings. */
import type { Clock } from '../../framework/context.js';
import { formatDuration } from '../../framework/fields.js';

const NS_PER_MS = 1_000_000n;

/**
 * Nanoseconds since the epoch: milliseconds from the injected clock, the sub-millisecond part from the
 * monotonic high-resolution timer (Vault's timestamps carry nanoseconds; only ordering within a ms is lost).
 */
export function nowNanos(clock: Clock): bigint {
  return BigInt(Math.floor(clock.now())) * NS_PER_MS + (process.hrtime.bigint() % NS_PER_MS);
}

/** Format like Go's `time.RFC3339Nano` in UTC: trailing zeros of the fraction trimmed, no fraction when zero. */
export function formatRfc3339Nano(ns: bigint): string {
  const ms = Number(ns / NS_PER_MS);
  const base = new Date(ms).toISOString().slice(0, 19);
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${base}${frac ? '.' + frac : ''}Z`;
}

/** Milliseconds since the epoch of an RFC 3339 string we wrote; NaN for "" (unset). */
export function parseRfc3339(s: string): number {
  return s === '' ? Number.NaN : Date.parse(s);
}

/** Go's `time.Duration.String()` for whole seconds, including negatives ("-1s" disables delete_version_after). */
export function goDuration(seconds: number): string {
  return seconds < 0 ? '-' + formatDuration(-seconds) : formatDuration(seconds);
}
