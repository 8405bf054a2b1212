/**
 * Rate-limit quotas: the records behind the barrier (`sys/quotas/`), the live limiters, the
 * precomputed index the router's quota stage asks, and the quota config (exempt paths, audit of
 * refusals, response headers). Every node of a cluster loads the same records from shared storage
 * and enforces them itself; a change on one node reaches the others through storage invalidation
 * (`reload`).
 */
import { invalid } from '../framework/errors.js';
import { getJSON, putJSON, type Storage } from '../storage/backend.js';
import { QuotaIndex } from './quota-index.js';
import { RateLimiter, type RateLimitRecord, type Verdict } from './rate-limit.js';

/** sys/quotas/config. */
export interface QuotaConfig {
  rate_limit_exempt_paths: string[];
  enable_rate_limit_audit_logging: boolean;
  enable_rate_limit_response_headers: boolean;
}

/** Vault's default exempt paths (vault/quotas/quotas.go), as logical paths. */
export const DEFAULT_EXEMPT_PATHS = [
  'sys/generate-recovery-token/attempt',
  'sys/generate-recovery-token/update',
  'sys/generate-root/attempt',
  'sys/generate-root/update',
  'sys/health',
  'sys/seal-status',
  'sys/unseal',
];

const CONFIG_KEY = 'config';
const RATE_PREFIX = 'rate-limit/';

/** The quota manager of one node. */
export class QuotaManager {
  private limiters = new Map<string, RateLimiter>();
  private index = new QuotaIndex([]);
  private exact = new Set<string>(DEFAULT_EXEMPT_PATHS);
  private exemptPrefixes: string[] = [];
  config: QuotaConfig = {
    rate_limit_exempt_paths: [...DEFAULT_EXEMPT_PATHS],
    enable_rate_limit_audit_logging: false,
    enable_rate_limit_response_headers: false,
  };

  constructor(
    /** Barrier storage scoped to `sys/quotas/`. */
    private readonly storage: Storage,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when no quota exists (the router's stage then costs one property read). */
  get empty(): boolean {
    return this.index.empty;
  }

  /** Read records and config (after unseal, or when another node changed them). */
  async reload(): Promise<void> {
    const config = await getJSON<QuotaConfig>(this.storage, CONFIG_KEY);
    this.applyConfig(
      config ?? {
        rate_limit_exempt_paths: [...DEFAULT_EXEMPT_PATHS],
        enable_rate_limit_audit_logging: false,
        enable_rate_limit_response_headers: false,
      },
    );
    const next = new Map<string, RateLimiter>();
    for (const name of await this.storage.list(RATE_PREFIX)) {
      if (name.endsWith('/')) continue;
      const rec = await getJSON<RateLimitRecord>(this.storage, RATE_PREFIX + name);
      if (!rec) continue;
      // Keep the live counts of a quota whose record did not change.
      const old = this.limiters.get(rec.name);
      next.set(rec.name, old && sameRecord(old.record, rec) ? old : new RateLimiter(rec));
    }
    this.limiters = next;
    this.index = new QuotaIndex(next.values());
  }

  /** Forget everything (seal). */
  clear(): void {
    this.limiters = new Map();
    this.index = new QuotaIndex([]);
  }

  /** Names of the rate-limit quotas, sorted. */
  names(): string[] {
    return [...this.limiters.keys()].sort();
  }

  get(name: string): RateLimitRecord | undefined {
    return this.limiters.get(name)?.record;
  }

  /** Create or replace a quota (checked by the route); refuses a second quota on the same path and role. */
  async put(rec: RateLimitRecord): Promise<void> {
    for (const q of this.limiters.values()) {
      const r = q.record;
      if (
        r.name !== rec.name &&
        r.mount_path === rec.mount_path &&
        r.path_suffix === rec.path_suffix &&
        r.role === rec.role
      ) {
        throw invalid(`quota rule with similar properties exists under the name "${r.name}"`);
      }
    }
    await putJSON(this.storage, RATE_PREFIX + rec.name, rec);
    const next = new Map(this.limiters);
    next.set(rec.name, new RateLimiter(rec));
    this.limiters = next;
    this.index = new QuotaIndex(next.values());
  }

  async delete(name: string): Promise<void> {
    await this.storage.delete(RATE_PREFIX + name);
    if (!this.limiters.has(name)) return;
    const next = new Map(this.limiters);
    next.delete(name);
    this.limiters = next;
    this.index = new QuotaIndex(next.values());
  }

  /** Replace the config (sys/quotas/config). */
  async setConfig(c: QuotaConfig): Promise<void> {
    await putJSON(this.storage, CONFIG_KEY, c);
    this.applyConfig(c);
  }

  /** A mount moved (sys/remount): its quotas follow it, as Vault's handleRemount does. */
  async remounted(from: string, to: string): Promise<void> {
    for (const q of [...this.limiters.values()]) {
      const r = q.record;
      if (r.mount_path !== from) continue;
      await this.put({ ...r, mount_path: to, path: to + (r.path_suffix ? r.path_suffix : '') });
    }
  }

  /** Whether the quota stage needs the role of a login on this mount. */
  needsRole(mountPath: string): boolean {
    return this.index.hasRoles(mountPath);
  }

  /**
   * Count a request of `client` to `path` (logical, no slashes at the ends) under `mountPath`
   * (`sub` is the part after it): the quota's verdict (reused: read it before the next request), or
   * null when no quota governs the request or its path is exempt.
   */
  check(path: string, mountPath: string, sub: string, client: string, role?: string): Verdict | null {
    const quota = this.index.find(mountPath, sub, role);
    if (quota === null || this.isExempt(path)) return null;
    return quota.take(client, this.now());
  }

  private isExempt(path: string): boolean {
    if (this.exact.has(path)) return true;
    for (const p of this.exemptPrefixes) if (path.startsWith(p)) return true;
    return false;
  }

  private applyConfig(c: QuotaConfig): void {
    this.config = c;
    const exact = new Set<string>();
    const prefixes: string[] = [];
    for (const p of c.rate_limit_exempt_paths) {
      const s = p.replace(/^\/+/, '').replace(/^v1\//, '');
      if (s.endsWith('*')) prefixes.push(s.slice(0, -1));
      else exact.add(s.replace(/\/+$/, ''));
    }
    this.exact = exact;
    this.exemptPrefixes = prefixes;
  }
}

function sameRecord(a: RateLimitRecord, b: RateLimitRecord): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
