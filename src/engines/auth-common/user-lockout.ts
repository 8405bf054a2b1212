/**
 * Vault's user lockout (vault/request_handling.go, user lockout on failed logins, with
 * UserLockoutConfig; defaults 5 failures, 15 minutes locked, counter reset after 15 minutes), per
 * alias name, in memory as Vault keeps it per node. Tunable per mount through `user_lockout_config`.
 */
import type { Clock, MountInfo } from '../../framework/context.js';

interface Entry {
  count: number;
  since: number;
  lockedUntil: number;
}

/** The lockout settings in force for a mount. */
export interface LockoutSettings {
  threshold: number;
  duration: number;
  reset: number;
  disabled: boolean;
}

/** Vault's defaults, overridden by the mount's tuned `user_lockout_config`. */
export function lockoutSettings(mount: MountInfo): LockoutSettings {
  const c = (mount.config.user_lockout_config ?? {}) as Record<string, unknown>;
  return {
    threshold: typeof c.lockout_threshold === 'number' && c.lockout_threshold > 0 ? c.lockout_threshold : 5,
    duration: typeof c.lockout_duration === 'number' && c.lockout_duration > 0 ? c.lockout_duration : 900,
    reset: typeof c.lockout_counter_reset === 'number' && c.lockout_counter_reset > 0 ? c.lockout_counter_reset : 900,
    disabled: c.lockout_disable === true,
  };
}

/** Failed logins per alias name on one mount. */
export class UserLockout {
  private readonly failures = new Map<string, Entry>();

  constructor(
    private readonly mount: () => MountInfo,
    private readonly clock: Clock,
  ) {}

  /** True while `name` is locked out. */
  locked(name: string): boolean {
    const f = this.failures.get(name);
    return f !== undefined && f.lockedUntil > this.clock.now();
  }

  /** Count a failed login of `name`; at the threshold it is locked out for the duration. */
  fail(name: string): void {
    const cfg = lockoutSettings(this.mount());
    if (cfg.disabled) return;
    const now = this.clock.now();
    let f = this.failures.get(name);
    if (!f || now - f.since > cfg.reset * 1000) f = { count: 0, since: now, lockedUntil: 0 };
    f.count += 1;
    if (f.count >= cfg.threshold) f.lockedUntil = now + cfg.duration * 1000;
    if (this.failures.size > 100_000) this.failures.clear();
    this.failures.set(name, f);
  }

  /** A successful login clears the count. */
  succeed(name: string): void {
    this.failures.delete(name);
  }
}
