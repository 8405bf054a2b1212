/**
 * The `telemetry { ... }` stanza of the server config and a listener's
 * `telemetry { unauthenticated_metrics_access = true }`, read with Vault's key names
 * (Vault docs: configuration/telemetry). Only keys keyhold acts on are accepted; the sinks keyhold
 * has no code for (statsd, statsite, circonus, dogstatsd, stackdriver) are refused by name.
 */
import { hclToPlain, type HclValue, type PlainValue } from '../framework/hcl.js';
import { parseDuration } from '../framework/fields.js';

/** Telemetry settings (seconds for durations). */
export interface TelemetryConfig {
  /** How long a series not updated stays in the Prometheus output (Vault's default 24h; 0 turns Prometheus off). */
  prometheus_retention_time: number;
  /** Without it, gauge names carry the host name after the prefix, as go-metrics does. */
  disable_hostname: boolean;
  /** How often usage gauges (token counts) are collected; 0 with "none". Vault's default 10m. */
  usage_gauge_period: number;
  /** Prefix of Vault-named metrics (Vault's `metrics_prefix`, default "vault"). */
  metrics_prefix: string;
}

/** Vault's defaults. */
export const DEFAULT_TELEMETRY: TelemetryConfig = {
  prometheus_retention_time: 24 * 3600,
  disable_hostname: false,
  usage_gauge_period: 600,
  metrics_prefix: 'vault',
};

const UNSUPPORTED_SINKS = [
  'statsite_address',
  'statsd_address',
  'circonus_api_token',
  'circonus_api_app',
  'circonus_api_url',
  'circonus_submission_interval',
  'circonus_submission_url',
  'circonus_check_id',
  'circonus_broker_id',
  'dogstatsd_addr',
  'dogstatsd_tags',
  'stackdriver_project_id',
  'stackdriver_location',
  'stackdriver_namespace',
];

function bool(v: PlainValue, fail: (why: string) => never): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === '1' || v === 't') return true;
  if (v === 'false' || v === '0' || v === 'f' || v === '') return false;
  fail(`must be a boolean, got ${JSON.stringify(v)}`);
}

function duration(v: PlainValue, key: string, fail: (why: string) => never): number {
  if (v === 'none' || v === 'off') return 0;
  try {
    return parseDuration(key, v);
  } catch {
    fail(`must be a duration such as "24h" or "30s", got ${JSON.stringify(v)}`);
  }
}

/** Read the top-level `telemetry` stanza; `fail(key, why)` reports an error naming the key. */
export function parseTelemetryStanza(value: HclValue, fail: (key: string, why: string) => never): TelemetryConfig {
  const plain = hclToPlain(value);
  if (plain === null || typeof plain !== 'object' || Array.isArray(plain))
    fail('telemetry', 'must be a block, as in telemetry { prometheus_retention_time = "24h" }');
  const cfg: TelemetryConfig = { ...DEFAULT_TELEMETRY };
  for (const [k, v] of Object.entries(plain)) {
    const f = (why: string): never => fail(`telemetry.${k}`, why);
    switch (k) {
      case 'prometheus_retention_time':
        cfg.prometheus_retention_time = duration(v, k, f);
        break;
      case 'disable_hostname':
        cfg.disable_hostname = bool(v, f);
        break;
      case 'usage_gauge_period':
        cfg.usage_gauge_period = duration(v, k, f);
        break;
      case 'metrics_prefix':
        if (typeof v !== 'string' || !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(v))
          return f('must be a metric name prefix such as "vault"');
        cfg.metrics_prefix = v;
        break;
      default:
        if (UNSUPPORTED_SINKS.includes(k))
          f('this sink is not supported by keyhold (scrape GET /v1/sys/metrics?format=prometheus instead)');
        f('unknown key (allowed: prometheus_retention_time, disable_hostname, usage_gauge_period, metrics_prefix)');
    }
  }
  return cfg;
}

/** Read a listener's `telemetry { unauthenticated_metrics_access = true }`; true when metrics need no token on it. */
export function parseListenerTelemetry(value: HclValue, fail: (key: string, why: string) => never): boolean {
  const plain = hclToPlain(value);
  if (plain === null || typeof plain !== 'object' || Array.isArray(plain))
    fail('telemetry', 'must be a block, as in telemetry { unauthenticated_metrics_access = true }');
  let open = false;
  for (const [k, v] of Object.entries(plain)) {
    if (k !== 'unauthenticated_metrics_access')
      fail(`telemetry.${k}`, 'unknown key (allowed: unauthenticated_metrics_access)');
    open = bool(v, (why) => fail(`telemetry.${k}`, why));
  }
  return open;
}
