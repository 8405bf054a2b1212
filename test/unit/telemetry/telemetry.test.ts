import { describe, expect, it } from 'vitest';
import { parseHcl } from '../../../src/framework/hcl.js';
import { MetricsRegistry, promName } from '../../../src/telemetry/registry.js';
import { parseListenerTelemetry, parseTelemetryStanza } from '../../../src/telemetry/telemetry-config.js';
import { Telemetry } from '../../../src/telemetry/telemetry.js';
import type { MountInfo } from '../../../src/framework/context.js';

const fail = (k: string, why: string): never => {
  throw new Error(`${k}: ${why}`);
};
const stanza = (text: string) => parseHcl(text).items[0]!.value;

describe('metrics registry', () => {
  it('renders the Prometheus text format: HELP, TYPE, labels escaped, summaries as _sum and _count', () => {
    const r = new MetricsRegistry();
    r.counter('keyhold.transit.operations', 'ops', { operation: 'encrypt', key_type: 'a"b\\c' }).inc(3, 0);
    r.summary('vault.core.handle_request', 'time').observe(2.5, 0);
    r.summary('vault.core.handle_request', 'time').observe(1.5, 0);
    r.gauge('vault.core.unsealed', 'sealed?').set(1, 0);
    const text = r.prometheus({ retentionMs: 1000, now: 10 });
    expect(text).toContain('# TYPE keyhold_transit_operations counter\n');
    expect(text).toContain('keyhold_transit_operations{operation="encrypt",key_type="a\\"b\\\\c"} 3\n');
    expect(text).toContain(
      '# TYPE vault_core_handle_request summary\nvault_core_handle_request_sum 4\nvault_core_handle_request_count 2\n',
    );
    expect(text).toContain('vault_core_unsealed 1\n');
  });

  it('leaves out series not updated within the retention time', () => {
    const r = new MetricsRegistry();
    r.counter('old.one', 'x').inc(1, 0);
    r.counter('new.one', 'x').inc(1, 5000);
    const text = r.prometheus({ retentionMs: 1000, now: 5500 });
    expect(text).not.toContain('old_one');
    expect(text).toContain('new_one 1');
  });

  it('refuses one name for two kinds, and keeps one series per label set', () => {
    const r = new MetricsRegistry();
    const a = r.counter('x.y', 'h', { l: '1' });
    expect(r.counter('x.y', 'h', { l: '1' })).toBe(a);
    expect(() => r.gauge('x.y', 'h')).toThrow(/is a counter/);
  });

  it('names Prometheus metrics as Vault does (dots and dashes to underscores)', () => {
    expect(promName('vault.route.update.transit-')).toBe('vault_route_update_transit_');
  });
});

describe('telemetry observer', () => {
  const mount = { path: 'transit/', type: 'transit', uuid: 'u' } as MountInfo;
  const engine = { keys: { cached: (n: string) => (n === 'k' ? { type: 'aes256-gcm96' } : undefined) } };

  it('counts transit operations by operation and key type, and routes by operation and mount', async () => {
    const t = new Telemetry({ disable_hostname: true });
    const req = (op: string, path: string, name: string) => ({
      op,
      mounted: { mount, instance: engine },
      route: { path },
      params: { name },
      token: {},
      reply: undefined,
    });
    for (let i = 0; i < 3; i++) t.request(req('update', 'encrypt/:name', 'k'), performance.now());
    t.request(req('update', 'decrypt/:name', 'missing'), performance.now());
    const text = (await t.prometheus())!;
    expect(text).toContain(
      'keyhold_transit_operations{mount="transit/",operation="encrypt",key_type="aes256-gcm96"} 3',
    );
    expect(text).toContain('keyhold_transit_operations{mount="transit/",operation="decrypt",key_type="none"} 1');
    expect(text).toMatch(/vault_route_update_transit__count 4/);
    expect(text).toMatch(/vault_core_handle_request_count 4/);
    expect(text).toMatch(/vault_token_lookup 4/);
  });

  it('counts token creation with Vault labels from an auth block', async () => {
    const t = new Telemetry({ disable_hostname: true });
    const tm = { path: 'auth/token/', type: 'token', uuid: 't' } as MountInfo;
    t.request(
      {
        op: 'update',
        mounted: { mount: tm, instance: {} },
        route: { path: 'create' },
        params: {},
        token: {},
        reply: { auth: { client_token: 'hvs.x', lease_duration: 3600, token_type: 'service' } },
      },
      performance.now(),
    );
    expect(await t.prometheus()).toContain(
      'vault_token_creation{auth_method="token",mount_point="auth/token/",creation_ttl="1h",token_type="service"} 1',
    );
  });

  it('puts the host name into gauge names unless disable_hostname, and renames the vault prefix', async () => {
    const t = new Telemetry({ metrics_prefix: 'kh' });
    t.addCollector((x) => x.registry.gauge('vault.core.unsealed', 'u').set(1));
    const text = (await t.prometheus())!;
    expect(text).toMatch(/^kh_[^_\s]+.*_core_unsealed 1$/m);
    expect(text).toMatch(/^# TYPE kh_core_handle_request summary$/m);
  });

  it('answers null for Prometheus when prometheus_retention_time is 0', async () => {
    expect(await new Telemetry({ prometheus_retention_time: 0 }).prometheus()).toBeNull();
  });
});

describe('telemetry stanza', () => {
  it("reads Vault's keys with Vault's defaults", () => {
    expect(
      parseTelemetryStanza(
        stanza(
          'telemetry {\n disable_hostname = true\n prometheus_retention_time = "30s"\n usage_gauge_period = "none"\n}',
        ),
        fail,
      ),
    ).toEqual({
      prometheus_retention_time: 30,
      disable_hostname: true,
      usage_gauge_period: 0,
      metrics_prefix: 'vault',
    });
    expect(parseTelemetryStanza(stanza('telemetry {}'), fail).prometheus_retention_time).toBe(86400);
  });

  it('refuses unknown keys and sinks keyhold has no code for, naming them', () => {
    expect(() => parseTelemetryStanza(stanza('telemetry {\n dogstatsd_addr = "x"\n}'), fail)).toThrow(
      /^telemetry\.dogstatsd_addr: this sink is not supported/,
    );
    expect(() => parseTelemetryStanza(stanza('telemetry {\n bogus = 1\n}'), fail)).toThrow(
      /^telemetry\.bogus: unknown key/,
    );
    expect(() => parseTelemetryStanza(stanza('telemetry {\n prometheus_retention_time = "soon"\n}'), fail)).toThrow(
      /^telemetry\.prometheus_retention_time: must be a duration/,
    );
  });

  it("reads a listener's unauthenticated_metrics_access", () => {
    expect(parseListenerTelemetry(stanza('telemetry {\n unauthenticated_metrics_access = true\n}'), fail)).toBe(true);
    expect(() => parseListenerTelemetry(stanza('telemetry {\n other = true\n}'), fail)).toThrow(
      /^telemetry\.other: unknown key/,
    );
  });
});
