/**
 * 1,000 associations sync with bounded memory: 1,000 KV secrets linked to one Azure destination
 * (OAuth token fetched once and cached), every one arrives and reports SYNCED, and the daemon's
 * resident memory grows by a bounded amount (read from /proc, Linux only).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { startDaemon, cleanup, type Daemon } from '../support/daemon.js';
import { AzureFake } from '../fakes/azure.js';
import { until } from '../fakes/wait.js';

const N = 1000;
const HEAP_MIB = 64;
const az = new AzureFake();
let d: Daemon;

function rssKiB(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Run `fn` over 0..n-1 with at most `width` in flight. */
async function pool(n: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

beforeAll(async () => {
  await az.start();
  // The V8 old space is capped: a daemon whose memory grew with the work done (rather than with the
  // small per-association state) would die of heap exhaustion and fail the test.
  d = await startDaemon({ env: { KEYHOLD_SYNC_SET_WAIT_MS: '0', NODE_OPTIONS: `--max-old-space-size=${HEAP_MIB}` } });
});
afterAll(async () => {
  await d?.kill();
  if (d) cleanup(d.dir);
  await az.stop();
});

describe('sync at scale', () => {
  it(`${N} associations all sync, with one token and bounded daemon memory`, async () => {
    const dest = await d.req('POST', 'sys/sync/destinations/provider-b-kv/bulk', {
      key_vault_uri: az.url,
      client_id: az.clientId,
      client_secret: az.clientSecret,
      tenant_id: az.tenant,
      authority_host: az.url,
      allowed_ipv4_addresses: ['127.0.0.1/32'],
      allowed_ports: [az.server.port],
    });
    expect(dest.status, dest.text).toBe(200);
    await d.req('POST', 'secret/data/warmup', { data: { v: 'w' } });
    await d.req('POST', 'sys/sync/destinations/provider-b-kv/bulk/associations/set', {
      mount: 'secret',
      secret_name: 'warmup',
    });
    const before = rssKiB(d.proc.pid!);

    await pool(N, 16, async (i) => {
      const w = await d.req('POST', `secret/data/bulk/s${i}`, { data: { n: String(i), pad: 'x'.repeat(512) } });
      if (w.status !== 200) throw new Error(`kv write ${i}: ${w.status}`);
      const s = await d.req('POST', 'sys/sync/destinations/provider-b-kv/bulk/associations/set', {
        mount: 'secret',
        secret_name: `bulk/s${i}`,
      });
      if (s.status !== 200) throw new Error(`set ${i}: ${s.status} ${s.text}`);
    });

    await until(
      () => az.secrets.size,
      (n) => n === N + 1,
      120_000,
      200,
    );
    const assoc = await until(
      async () =>
        (await d.req('GET', 'sys/sync/destinations/provider-b-kv/bulk/associations')).body.data
          .associated_secrets as Record<string, { sync_status: string }>,
      (m) => Object.values(m).filter((r) => r.sync_status === 'SYNCED').length === N + 1,
      60_000,
      500,
    );
    expect(Object.keys(assoc)).toHaveLength(N + 1);
    const accessor = (await d.req('GET', 'sys/mounts')).body.data['secret/'].accessor as string;
    expect(az.valueOf(`vault-${accessor.replace(/_/g, '-')}-bulk-s999`)).toBe(
      JSON.stringify({ n: '999', pad: 'x'.repeat(512) }),
    );
    expect(az.tokensIssued).toBe(1);
    const list = await d.req('LIST', 'sys/sync/associations');
    expect(list.body.data.total_associations).toBe(N + 1);
    expect(d.proc.exitCode).toBeNull();

    const after = rssKiB(d.proc.pid!);
    if (before !== null && after !== null) {
      const growthMiB = (after - before) / 1024;
      console.log(
        `daemon RSS: ${Math.round(before / 1024)} MiB -> ${Math.round(after / 1024)} MiB (+${growthMiB.toFixed(1)} MiB) for ${N} associations`,
      );
      // RSS includes garbage V8 has not returned yet; the heap cap above is the hard bound.
      expect(growthMiB).toBeLessThan(HEAP_MIB * 3);
    }
  }, 180_000);
});
