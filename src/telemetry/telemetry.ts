/**
 * Telemetry of one daemon: an observer of the request pipeline, the barrier and the audit stage,
 * plus gauges collected when metrics are read. Vault's names for what keyhold shares with Vault
 * (vault/core_metrics.go, vault/request_handling.go, vault/barrier_aes_gcm.go, Vault's telemetry
 * reference), keyhold's own under `keyhold.`.
 *
 * Hot-path rule (issue 27's budget: encrypt within 5% with telemetry on): a request costs one
 * performance.now() pair and a few Map lookups keyed by objects that already exist (mount entry,
 * route, key type); series handles are created once per (mount, operation, key type) and then
 * reused, so nothing is allocated per request.
 */
import { hostname } from 'node:os';
import type { MountInfo } from '../framework/context.js';
import { MetricsRegistry, type Series } from './registry.js';
import { DEFAULT_TELEMETRY, type TelemetryConfig } from './telemetry-config.js';

/** What the telemetry reads of a request when it ends (the router's Flow has these fields). */
export interface ObservedRequest {
  op: string;
  mounted: { mount: MountInfo; instance: unknown } | null;
  route: { path: string } | null;
  params: Record<string, string>;
  token: unknown;
  reply?: { auth?: Record<string, unknown> | null; status?: number } | undefined;
}

/** A gauge source, run just before metrics are rendered. */
export type Collector = (t: Telemetry) => void | Promise<void>;

/** Barrier operations measured (Vault's vault.barrier.*). */
export type BarrierOp = 'get' | 'put' | 'delete' | 'list';

/** Transit key store shape read for the key_type label (a cached key only: no storage read). */
interface TransitLike {
  keys?: { cached?(name: string): { type?: string } | undefined };
}

/** Vault's creation_ttl buckets of vault.token.creation (vault/token_store.go ttlBucket). */
const TTL_BUCKETS: Array<[number, string]> = [
  [60, '1m'],
  [600, '10m'],
  [1200, '20m'],
  [3600, '1h'],
  [7200, '2h'],
  [86400, '1d'],
  [2 * 86400, '2d'],
  [7 * 86400, '7d'],
  [30 * 86400, '30d'],
];

function ttlBucket(seconds: number): string {
  if (!seconds) return '+Inf';
  for (const [limit, name] of TTL_BUCKETS) if (seconds <= limit) return name;
  return '+Inf';
}

/** The daemon's telemetry. */
export class Telemetry {
  readonly registry = new MetricsRegistry();
  readonly config: TelemetryConfig;
  /** Metrics may be read without a token (a listener's unauthenticated_metrics_access). */
  readonly unauthenticatedAccess: boolean;
  private readonly collectors: Collector[] = [];
  private readonly host = hostname();
  private readonly handleRequest: Series;
  private readonly tokenLookup: Series;
  private readonly barrier: Record<BarrierOp, Series>;
  private readonly commit: Series;
  private readonly auditRequest: Series;
  private readonly auditResponse: Series;
  private readonly forward: Series;
  private readonly forwardErrors: Series;
  /** vault.route.<op>.<mount> per mount entry, by operation. */
  private readonly routes = new WeakMap<MountInfo, Partial<Record<string, Series>>>();
  /** keyhold.transit.operations per mount entry, by route path, by key type. */
  private readonly transit = new WeakMap<MountInfo, Map<string, Map<string, Series>>>();
  private usageTimer: NodeJS.Timeout | null = null;

  constructor(config: Partial<TelemetryConfig> = {}, opts: { unauthenticatedAccess?: boolean } = {}) {
    this.config = { ...DEFAULT_TELEMETRY, ...config };
    this.unauthenticatedAccess = opts.unauthenticatedAccess ?? false;
    const r = this.registry;
    this.handleRequest = r.summary('vault.core.handle_request', 'Time to handle a request, milliseconds');
    this.tokenLookup = r.counter('vault.token.lookup', 'Requests that presented a token (token store lookups)');
    this.barrier = {
      get: r.summary('vault.barrier.get', 'Barrier reads, milliseconds'),
      put: r.summary('vault.barrier.put', 'Barrier writes (seal and store), milliseconds'),
      delete: r.summary('vault.barrier.delete', 'Barrier deletes, milliseconds'),
      list: r.summary('vault.barrier.list', 'Barrier lists, milliseconds'),
    };
    this.commit = r.summary(
      'keyhold.storage.commit',
      'Storage backend commit of one record (durable when it returns), milliseconds',
    );
    this.auditRequest = r.summary(
      'vault.audit.log_request',
      'Time to log a request to the audit devices, milliseconds',
    );
    this.auditResponse = r.summary(
      'vault.audit.log_response',
      'Time to log a response to the audit devices, milliseconds',
    );
    this.forward = r.summary(
      'vault.ha.rpc.client.forward',
      'Requests a standby relayed to the active node, milliseconds',
    );
    this.forwardErrors = r.counter(
      'vault.ha.rpc.client.forward.errors',
      'Requests a standby failed to relay to the active node',
    );
  }

  /** Add a gauge source (run before each read of the metrics). */
  addCollector(c: Collector): void {
    this.collectors.push(c);
  }

  /** Router hook: one request ended; `t0` is performance.now() at its start. */
  request(f: ObservedRequest, t0: number): void {
    const now = performance.now();
    const ms = now - t0;
    this.handleRequest.observe(ms, now);
    if (f.token) this.tokenLookup.inc(1, now);
    const m = f.mounted;
    if (!m || !f.route) return;
    const mount = m.mount;
    let byOp = this.routes.get(mount);
    if (!byOp) {
      byOp = {};
      this.routes.set(mount, byOp);
    }
    let s = byOp[f.op];
    if (!s) {
      // Vault: MeasureSince([vault route <operation> <mount with / as ->]).
      s = this.registry.summary(
        `vault.route.${f.op}.${mount.path.replace(/\//g, '-')}`,
        `Requests of operation ${f.op} to the ${mount.path} mount, milliseconds`,
      );
      byOp[f.op] = s;
    }
    s.observe(ms, now);
    if (mount.type === 'transit') this.transitOp(mount, f, m.instance as TransitLike, now);
    const auth = f.reply?.auth;
    if (auth && typeof auth.client_token === 'string') this.tokenCreated(mount, auth);
  }

  private transitOp(mount: MountInfo, f: ObservedRequest, engine: TransitLike, now: number): void {
    const routePath = f.route!.path;
    let byRoute = this.transit.get(mount);
    if (!byRoute) {
      byRoute = new Map();
      this.transit.set(mount, byRoute);
    }
    let byType = byRoute.get(routePath);
    if (!byType) {
      byType = new Map();
      byRoute.set(routePath, byType);
    }
    const name = f.params.name;
    const type = (name !== undefined && engine.keys?.cached?.(name)?.type) || 'none';
    let s = byType.get(type);
    if (!s) {
      // The operation is the route's first word: encrypt, decrypt, sign, keys, ...
      const operation = routePath.split('/')[0]!;
      s = this.registry.counter('keyhold.transit.operations', 'Transit requests by operation and key type', {
        mount: mount.path,
        operation,
        key_type: type,
      });
      byType.set(type, s);
    }
    s.inc(1, now);
  }

  private tokenCreated(mount: MountInfo, auth: Record<string, unknown>): void {
    const ttl = typeof auth.lease_duration === 'number' ? auth.lease_duration : 0;
    const method = mount.path === 'auth/token/' ? 'token' : mount.type;
    this.registry
      .counter('vault.token.creation', 'Tokens created, by auth method, mount, type and TTL bucket', {
        auth_method: method,
        mount_point: mount.path,
        creation_ttl: ttlBucket(ttl),
        token_type: typeof auth.token_type === 'string' ? auth.token_type : 'service',
      })
      .inc();
  }

  /** Barrier hook: one operation took from `t0` to now; `tCommit` (put only) is when the backend write began. */
  barrierOp(op: BarrierOp, t0: number, tCommit = 0): void {
    const now = performance.now();
    this.barrier[op].observe(now - t0, now);
    if (tCommit) this.commit.observe(now - tCommit, now);
  }

  /** Router hook: a standby relayed a request to the active node (Vault's vault.ha.rpc.client.forward). */
  forwarded(sent: Promise<void>, t0: number): Promise<void> {
    return sent.then(
      () => this.forward.observe(performance.now() - t0),
      (e: unknown) => {
        this.forwardErrors.inc();
        throw e;
      },
    );
  }

  /** Audit hook: logging a request or response took from `t0` until `done` settles. */
  audit<T>(kind: 'request' | 'response', done: Promise<T>, t0: number): Promise<T> {
    const s = kind === 'request' ? this.auditRequest : this.auditResponse;
    return done.finally(() => s.observe(performance.now() - t0));
  }

  /** Run the collectors (gauges), each failure logged by the caller's `onError`. */
  async collect(onError: (e: unknown) => void = () => {}): Promise<void> {
    for (const c of this.collectors) {
      try {
        await c(this);
      } catch (e) {
        onError(e);
      }
    }
  }

  /** Name as exported: the Vault prefix may be renamed (metrics_prefix) and gauges carry the host name unless disabled. */
  private exportName(kind: 'gauge' | 'other', name: string): string {
    let n = name;
    if (this.config.metrics_prefix !== 'vault' && n.startsWith('vault.')) n = this.config.metrics_prefix + n.slice(5);
    if (kind === 'gauge' && !this.config.disable_hostname) {
      const dot = n.indexOf('.');
      n = `${n.slice(0, dot)}.${this.host}${n.slice(dot)}`;
    }
    return n;
  }

  private renamer(): (name: string) => string {
    const gauges = new Set(
      this.registry
        .list()
        .filter((f) => f.kind === 'gauge')
        .map((f) => f.name),
    );
    return (name) => this.exportName(gauges.has(name) ? 'gauge' : 'other', name);
  }

  /** Prometheus text format; null when Prometheus is off (prometheus_retention_time = 0). */
  async prometheus(onError?: (e: unknown) => void): Promise<string | null> {
    if (this.config.prometheus_retention_time <= 0) return null;
    await this.collect(onError);
    return this.registry.prometheus({
      retentionMs: this.config.prometheus_retention_time * 1000,
      rename: this.renamer(),
    });
  }

  /** Vault's in-memory sink JSON. */
  async json(onError?: (e: unknown) => void): Promise<Record<string, unknown>> {
    await this.collect(onError);
    return this.registry.json({ rename: this.renamer() });
  }

  /** Start the usage-gauge timer (usage_gauge_period); `run` collects the usage gauges. */
  startUsageGauges(run: () => Promise<void>, onError: (e: unknown) => void): void {
    if (this.usageTimer || this.config.usage_gauge_period <= 0) return;
    this.usageTimer = setInterval(() => void run().catch(onError), this.config.usage_gauge_period * 1000);
    this.usageTimer.unref();
    void run().catch(onError);
  }

  /** Stop timers. */
  close(): void {
    if (this.usageTimer) clearInterval(this.usageTimer);
    this.usageTimer = null;
  }
}
