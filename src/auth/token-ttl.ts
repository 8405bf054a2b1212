/**
 * The one place that decides how long a new token lives (Vault's sdk/framework/lease.go
 * CalculateTTL and the token store's use of it). Every path that issues a token goes through
 * `tokenLifetime`: auth/token/create (with or without a role), and every login (AppRole, JWT, the
 * methods to come). The rules:
 *
 * - the effective max is the mount's max (system 768h), lowered by the role's max and by an
 *   explicit max;
 * - a periodic token lives one period at a time, the period capped at the effective max (warning);
 * - any other token lives its requested TTL, else the mount's default (system 768h); a TTL past
 *   the effective max is capped to it (warning);
 * - only a root-policy token created without a TTL escapes both (it never expires), and it is still
 *   bounded by an explicit max.
 */
import { formatDuration, parseDuration } from '../framework/fields.js';

/** Vault's system default and max lease TTL (768h). */
export const SYSTEM_MAX_TTL = 768 * 3600;

/** What a new token asks for, in seconds (0 = not set). */
export interface LifetimeRequest {
  ttl: number;
  period: number;
  explicitMaxTtl: number;
  /** A role's max TTL (token_max_ttl); 0 = none. */
  roleMaxTtl: number;
  /** The issuing mount's tuned default and max lease TTL; 0 = the system's (768h). */
  mountDefaultTtl: number;
  mountMaxTtl: number;
  /** The token's policies include `root` (only such tokens may live without a TTL). */
  rootPolicy: boolean;
}

/** How long it lives. */
export interface Lifetime {
  /** Seconds of the first TTL; 0 = never expires (root-policy tokens only). */
  ttl: number;
  /** Seconds of the period (capped), 0 when not periodic. */
  period: number;
  /** The bound renewals respect, from creation (0 = none: periodic or never-expiring). */
  maxTtl: number;
  warnings: string[];
}

/** A duration as Vault's warnings print it (Go's Duration string without "0m"/"0s" tails: "768h", "1h30m"). */
export function humanDuration(seconds: number): string {
  if (seconds === 0) return '0s';
  let s = formatDuration(seconds);
  if (s.endsWith('m0s')) s = s.slice(0, -2);
  const i = s.indexOf('h0m');
  if (i > 0) s = s.slice(0, i + 1) + s.slice(i + 3);
  return s;
}

/** Apply the TTL rules to a token request. */
export function tokenLifetime(r: LifetimeRequest): Lifetime {
  const warnings: string[] = [];
  const mountMax = r.mountMaxTtl > 0 ? r.mountMaxTtl : SYSTEM_MAX_TTL;
  const mountDefault = Math.min(r.mountDefaultTtl > 0 ? r.mountDefaultTtl : SYSTEM_MAX_TTL, mountMax);
  let max = mountMax;
  if (r.roleMaxTtl > 0 && r.roleMaxTtl < max) max = r.roleMaxTtl;
  if (r.explicitMaxTtl > 0 && r.explicitMaxTtl < max) max = r.explicitMaxTtl;
  if (r.period > 0) {
    let period = r.period;
    if (period > max) {
      warnings.push(
        `period of "${humanDuration(period)}" exceeded the effective max_ttl of "${humanDuration(max)}"; period value is capped accordingly`,
      );
      period = max;
    }
    return { ttl: period, period, maxTtl: 0, warnings };
  }
  if (r.ttl <= 0 && r.rootPolicy) {
    // A root token without a TTL never expires, unless an explicit max bounds it.
    return { ttl: r.explicitMaxTtl > 0 ? r.explicitMaxTtl : 0, period: 0, maxTtl: 0, warnings };
  }
  let ttl = r.ttl > 0 ? r.ttl : mountDefault;
  if (ttl > max) {
    warnings.push(
      `TTL of "${humanDuration(ttl)}" exceeded the effective max_ttl of "${humanDuration(max)}"; TTL value is capped accordingly`,
    );
    ttl = max;
  }
  return { ttl, period: 0, maxTtl: max, warnings };
}

/** Seconds of a mount config TTL (stored as seconds or a duration string); 0 when unset. */
export function mountTtl(v: unknown): number {
  if (v === undefined || v === null || v === '' || v === 'system') return 0;
  try {
    return parseDuration('ttl', v);
  } catch {
    return 0;
  }
}
