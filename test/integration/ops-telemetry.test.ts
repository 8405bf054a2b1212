/**
 * Telemetry (issue 27 part 1): a real Prometheus server (Debian's `prometheus`, installed by
 * scripts/setup-test-env.sh) scrapes a keyhold daemon's GET /v1/sys/metrics?format=prometheus with a
 * bearer token, and a PromQL query through Prometheus's HTTP API returns the number of encrypt
 * requests this test made. Also: the JSON format, the token rule and a listener's
 * unauthenticated_metrics_access.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

const HAS_PROMETHEUS = spawnSync('prometheus', ['--version'], { stdio: 'ignore' }).status === 0;
if (!HAS_PROMETHEUS)
  console.warn(
    'ops-telemetry: `prometheus` not installed (scripts/setup-test-env.sh installs it as root); the scrape test is skipped',
  );

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('sys/metrics', () => {
  let d: Daemon;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keyhold-ops-tel-'));
    const cfg = join(dir, 'telemetry.hcl');
    writeFileSync(
      cfg,
      'telemetry {\n  prometheus_retention_time = "1h"\n  disable_hostname = true\n  usage_gauge_period = "1s"\n}\n',
    );
    d = await startDaemon({ tcp: true, args: ['--config', cfg] });
  });
  afterAll(async () => {
    await d?.stop();
    if (d) cleanup(d.dir);
    cleanup(dir);
  });

  it('answers 403 without a token and JSON in Vault in-memory sink shape with one', async () => {
    const anon = await d.req('GET', 'sys/metrics', undefined, { token: null });
    expect(anon.status).toBe(403);
    await d.req('POST', 'transit/keys/json-k', { type: 'aes256-gcm96' });
    expect((await d.req('POST', 'transit/encrypt/json-k', { plaintext: 'aGk=' })).status).toBe(200);
    const r = await d.req('GET', 'sys/metrics');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(expect.arrayContaining(['Timestamp', 'Gauges', 'Counters', 'Samples']));
    const ops = (r.body.Counters as Array<{ Name: string; Count: number; Labels: Record<string, string> }>).filter(
      (c) => c.Name === 'keyhold.transit.operations' && c.Labels.operation === 'encrypt',
    );
    expect(ops.reduce((s, c) => s + c.Count, 0)).toBe(1);
    expect(ops[0]!.Labels.key_type).toBe('aes256-gcm96');
    const unsealed = (r.body.Gauges as Array<{ Name: string; Value: number }>).find(
      (g) => g.Name === 'vault.core.unsealed',
    );
    expect(unsealed?.Value).toBe(1);
    const handle = (r.body.Samples as Array<{ Name: string; Count: number }>).find(
      (s) => s.Name === 'vault.core.handle_request',
    );
    expect(handle!.Count).toBeGreaterThanOrEqual(3);
  });

  it('reports gauges: seal state, barrier term, sync queue depth, and the token count usage gauge', async () => {
    await d.req('POST', 'sys/rotate', {});
    let text = '';
    for (let i = 0; i < 30 && !/^vault_token_count /m.test(text); i++) {
      await sleep(200);
      text = (await d.req('GET', 'sys/metrics?format=prometheus')).text;
    }
    expect(text).toMatch(/^vault_core_active 1$/m);
    expect(text).toMatch(/^keyhold_barrier_term 2$/m);
    expect(text).toMatch(/^keyhold_sync_queue_depth 0$/m);
    expect(Number(/^vault_token_count (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^vault_barrier_put_count [1-9]\d*$/m);
  });

  it('refuses an unknown format naming the field', async () => {
    const r = await d.req('GET', 'sys/metrics?format=xml');
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^format: /);
  });

  it.skipIf(!HAS_PROMETHEUS)(
    'a real Prometheus scrapes it and PromQL counts the encrypt requests made',
    { timeout: 90_000 },
    async () => {
      const N = 23;
      await d.req('POST', 'transit/keys/prom-k', { type: 'chacha20-poly1305' });
      for (let i = 0; i < N; i++)
        expect((await d.req('POST', 'transit/encrypt/prom-k', { plaintext: 'aGVsbG8=' })).status).toBe(200);
      const promPort = await freePort();
      const target = new URL(d.tcp!).host;
      const yml = join(dir, 'prometheus.yml');
      writeFileSync(
        yml,
        [
          'global:',
          '  scrape_interval: 1s',
          'scrape_configs:',
          '  - job_name: keyhold',
          '    metrics_path: /v1/sys/metrics',
          '    params:',
          '      format: [prometheus]',
          '    authorization:',
          '      credentials: root',
          '    static_configs:',
          `      - targets: ['${target}']`,
          '',
        ].join('\n'),
      );
      let prom: ChildProcess | null = null;
      let out = '';
      try {
        prom = spawn(
          'prometheus',
          [
            `--config.file=${yml}`,
            `--storage.tsdb.path=${join(dir, 'tsdb')}`,
            `--web.listen-address=127.0.0.1:${promPort}`,
            '--log.level=warn',
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        prom.stdout!.on('data', (c: Buffer) => (out += c.toString()));
        prom.stderr!.on('data', (c: Buffer) => (out += c.toString()));
        const q = encodeURIComponent(
          'sum(keyhold_transit_operations{job="keyhold",operation="encrypt",key_type="chacha20-poly1305"})',
        );
        let value: string | undefined;
        let up: string | undefined;
        for (let i = 0; i < 120 && value !== String(N); i++) {
          await sleep(500);
          if (prom.exitCode !== null) throw new Error(`prometheus exited: ${out}`);
          try {
            const r = (await (await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${q}`)).json()) as {
              data: { result: Array<{ value: [number, string] }> };
            };
            value = r.data.result[0]?.value[1];
            const u = (await (
              await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent('up{job="keyhold"}')}`)
            ).json()) as { data: { result: Array<{ value: [number, string] }> } };
            up = u.data.result[0]?.value[1];
          } catch {
            /* not listening yet */
          }
        }
        expect(up, out).toBe('1');
        expect(value, out).toBe(String(N));
      } finally {
        if (prom && prom.exitCode === null) {
          const exited = new Promise((r) => prom!.once('exit', r));
          prom.kill('SIGTERM');
          await exited;
        }
      }
    },
  );
});

describe('a listener with unauthenticated_metrics_access', () => {
  it('serves sys/metrics without a token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keyhold-ops-tel2-'));
    const port = await freePort();
    const cfg = join(dir, 'c.hcl');
    writeFileSync(
      cfg,
      `telemetry {\n  disable_hostname = true\n}\nlistener "tcp" {\n  address = "127.0.0.1:${port}"\n  tls_disable = true\n  telemetry {\n    unauthenticated_metrics_access = true\n  }\n}\n`,
    );
    const d = await startDaemon({ args: ['--config', cfg] });
    try {
      const r = await fetch(`http://127.0.0.1:${port}/v1/sys/metrics?format=prometheus`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(await r.text()).toMatch(/^vault_core_unsealed 1$/m);
    } finally {
      await d.stop();
      cleanup(d.dir);
      cleanup(dir);
    }
  });

  it('refuses an unknown key of the stanza at start, naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keyhold-ops-tel3-'));
    const cfg = join(dir, 'c.hcl');
    writeFileSync(cfg, 'telemetry {\n  statsd_address = "127.0.0.1:8125"\n}\n');
    const d = await startDaemon({ args: ['--config', cfg], wait: false });
    const code = await new Promise<number | null>((r) =>
      d.proc.exitCode !== null ? r(d.proc.exitCode) : d.proc.once('exit', r),
    );
    expect(code).not.toBe(0);
    expect(d.output()).toMatch(/telemetry\.statsd_address: this sink is not supported/);
    cleanup(d.dir);
    cleanup(dir);
  });
});
