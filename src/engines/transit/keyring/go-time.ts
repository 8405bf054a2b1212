/**
 * Go `time.Time` JSON text (RFC 3339 with up to nanosecond precision and an offset), as Vault writes
 * version times and `backup_info` (reference transit-wire.md section 5.2).
 */

/** Go's zero time as JSON. */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

/** Format Unix seconds (fractional, microsecond precision kept) as RFC 3339 in UTC, trailing zeros trimmed. */
export function formatGoTime(seconds: number): string {
  const whole = Math.floor(seconds);
  let micros = Math.round((seconds - whole) * 1e6);
  let base = whole;
  if (micros >= 1e6) {
    base += 1;
    micros -= 1e6;
  }
  const iso = new Date(base * 1000).toISOString().slice(0, 19);
  const frac = micros ? '.' + String(micros).padStart(6, '0').replace(/0+$/, '') : '';
  return `${iso}${frac}Z`;
}

/** Parse RFC 3339 (any offset, up to 9 fractional digits) to Unix seconds; null when malformed. Zero time -> 0. */
export function parseGoTime(text: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return null;
  if (m[1] === '0001') return 0;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  if (Number.isNaN(ms)) return null;
  let secs = ms / 1000;
  if (m[7]) secs += Number('0.' + m[7]);
  const off = m[8]!;
  if (off !== 'Z' && off !== 'z') {
    const sign = off[0] === '-' ? -1 : 1;
    secs -= sign * (Number(off.slice(1, 3)) * 3600 + Number(off.slice(4, 6)) * 60);
  }
  return secs;
}
