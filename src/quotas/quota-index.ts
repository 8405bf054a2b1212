/**
 * Which quota governs a request, precomputed when quotas change so a request costs one map lookup
 * when no quota is near it. The most specific wins, as in Vault's vault/quotas/quotas.go queryQuota:
 * a role on a login path, then the exact path under the mount, then the longest path prefix
 * (`suffix*`), then the mount, then the global quota.
 */
import type { RateLimiter } from './rate-limit.js';

interface MountQuotas {
  mount: RateLimiter | null;
  exact: Map<string, RateLimiter>;
  /** Prefix quotas, longest prefix first. */
  prefixes: Array<{ prefix: string; quota: RateLimiter }>;
  roles: Map<string, RateLimiter>;
}

/** The lookup structure over the live limiters. */
export class QuotaIndex {
  private readonly byMount = new Map<string, MountQuotas>();
  private readonly global: RateLimiter | null;
  /** No quota at all: the router skips the stage. */
  readonly empty: boolean;

  constructor(limiters: Iterable<RateLimiter>) {
    let global: RateLimiter | null = null;
    let n = 0;
    for (const q of limiters) {
      n++;
      const r = q.record;
      if (r.mount_path === '') {
        global = q;
        continue;
      }
      let mq = this.byMount.get(r.mount_path);
      if (!mq) this.byMount.set(r.mount_path, (mq = { mount: null, exact: new Map(), prefixes: [], roles: new Map() }));
      if (r.role !== '') mq.roles.set(r.role, q);
      else if (r.path_suffix === '') mq.mount = q;
      else if (r.path_suffix.endsWith('*')) mq.prefixes.push({ prefix: r.path_suffix.slice(0, -1), quota: q });
      else mq.exact.set(r.path_suffix, q);
    }
    for (const mq of this.byMount.values()) mq.prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
    this.global = global;
    this.empty = n === 0;
  }

  /** Whether role quotas exist on this mount (the role of a login must then be resolved). */
  hasRoles(mountPath: string): boolean {
    const mq = this.byMount.get(mountPath);
    return mq !== undefined && mq.roles.size > 0;
  }

  /** The quota governing a request to `sub` (path under the mount, no slashes at the ends) of `mountPath`. */
  find(mountPath: string, sub: string, role: string | undefined): RateLimiter | null {
    const mq = this.byMount.get(mountPath);
    if (mq === undefined) return this.global;
    if (role !== undefined && mq.roles.size > 0) {
      const q = mq.roles.get(role);
      if (q) return q;
    }
    if (mq.exact.size > 0) {
      const q = mq.exact.get(sub);
      if (q) return q;
    }
    for (let i = 0; i < mq.prefixes.length; i++)
      if (sub.startsWith(mq.prefixes[i]!.prefix)) return mq.prefixes[i]!.quota;
    return mq.mount ?? this.global;
  }
}
