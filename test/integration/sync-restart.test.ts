/**
 * Durability of the sync queue: a non-dev daemon on file storage is killed (SIGKILL) while operations
 * are in flight and queued; after restart and unseal they complete. Also: operations held while sync
 * is disabled survive a restart and run once re-enabled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, cleanup, type Daemon } from '../support/daemon.js';
import { VercelFake } from '../fakes/vercel.js';
import { until } from '../fakes/wait.js';

const env = {
  KEYHOLD_SYNC_SET_WAIT_MS: '0',
  KEYHOLD_SYNC_RETRY_BASE_MS: '100',
  KEYHOLD_SYNC_RETRY_MAX_MS: '500',
  KEYHOLD_SYNC_TIMEOUT_MS: '20000',
  KEYHOLD_SYNC_DEST_CONCURRENCY: '2',
  KEYHOLD_SYNC_RECONCILE_MS: '1000',
};
const vc = new VercelFake();
let d: Daemon;
let dir = '';
let recoveryKey = '';
let token = '';

async function start(): Promise<Daemon> {
  const daemon = await startDaemon({ dev: false, dir: dir || undefined, args: ['--keychain', 'none'], env });
  dir = daemon.dir;
  return daemon;
}

async function unseal(daemon: Daemon): Promise<void> {
  const r = await daemon.req('POST', 'sys/unseal', { key: recoveryKey }, { token: null });
  expect(r.status, r.text).toBe(200);
  expect(r.body.sealed).toBe(false);
}

const statuses = async (daemon: Daemon) =>
  Object.values(
    ((await daemon.req('GET', 'sys/sync/destinations/hosting-project/web/associations', undefined, { token })).body
      ?.data?.associated_secrets ?? {}) as Record<string, { sync_status: string }>,
  ).map((x) => x.sync_status);

beforeAll(async () => {
  await vc.start();
  d = await start();
  const init = await d.req('POST', 'sys/init', { keychain: false }, { token: null });
  expect(init.status, init.text).toBe(200);
  recoveryKey = init.body.keys[0];
  token = init.body.root_token;
  expect((await d.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, { token })).status).toBe(
    204,
  );
  const dest = await d.req(
    'POST',
    'sys/sync/destinations/hosting-project/web',
    {
      access_token: vc.token,
      project_id: vc.projectId,
      team_id: vc.teamId,
      deployment_environments: ['production'],
      endpoint_url: vc.url,
      allowed_ipv4_addresses: ['127.0.0.1/32'],
      allowed_ports: [vc.server.port],
    },
    { token },
  );
  expect(dest.status, dest.text).toBe(200);
});

afterAll(async () => {
  await d?.kill();
  if (dir) cleanup(dir);
  await vc.stop();
});

/** Every file under `root`, recursively; entries the running daemon removes meanwhile (emptied queue folders, renamed temp files) are skipped. */
function files(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return names.flatMap((n) => {
    const p = join(root, n);
    try {
      return statSync(p).isDirectory() ? files(p) : [p];
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
  });
}

describe('sync queue durability', () => {
  it('keeps credentials and synced values off the disk in plaintext', async () => {
    await d.req('POST', 'secret/data/plain', { data: { V: 'plaintext-marker-42' } }, { token });
    await d.req(
      'POST',
      'sys/sync/destinations/hosting-project/web/associations/set',
      { mount: 'secret', secret_name: 'plain' },
      { token },
    );
    await until(
      () => vc.envs.length,
      (n) => n === 1,
    );
    const all = files(join(dir, 'data')).flatMap((f) => {
      try {
        return [readFileSync(f)];
      } catch {
        return []; // removed by the daemon since the walk
      }
    });
    expect(all.reduce((n, b) => n + b.length, 0)).toBeGreaterThan(1000);
    for (const needle of [vc.token, 'plaintext-marker-42', vc.projectId])
      expect(
        all.some((b) => b.includes(needle)),
        needle,
      ).toBe(false);
    await d.req(
      'POST',
      'sys/sync/destinations/hosting-project/web/associations/remove',
      { mount: 'secret', secret_name: 'plain' },
      { token },
    );
    await until(
      () => statuses(d),
      (s) => s.length === 0,
    );
    expect(vc.envs).toHaveLength(0);
  });

  it('a daemon killed mid-queue completes the operations after restart', async () => {
    vc.server.failAlways({ delayMs: 8000 }); // provider hangs: operations stay in flight
    for (let i = 0; i < 6; i++) {
      expect((await d.req('POST', `secret/data/k${i}`, { data: { V: `v${i}` } }, { token })).status).toBe(200);
      expect(
        (
          await d.req(
            'POST',
            'sys/sync/destinations/hosting-project/web/associations/set',
            { mount: 'secret', secret_name: `k${i}` },
            { token },
          )
        ).status,
      ).toBe(200);
    }
    await until(
      () => vc.server.received,
      (n) => n >= 2,
    ); // two in flight (per-destination limit), four queued
    // The two at the provider read SYNCING (in flight, never stored), the four waiting PENDING.
    await until(
      () => statuses(d),
      (s) => s.filter((x) => x === 'SYNCING').length === 2 && s.filter((x) => x === 'PENDING').length === 4,
    );
    await d.kill();
    vc.server.heal();

    d = await start();
    expect((await d.req('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(true);
    await unseal(d);
    const accessor = (await d.req('GET', 'sys/mounts', undefined, { token })).body.data['secret/'].accessor as string;
    await until(
      () => statuses(d),
      (s) => s.length === 6 && s.every((x) => x === 'SYNCED'),
      30_000,
    );
    for (let i = 0; i < 6; i++) expect(vc.valueOf(`VAULT_${accessor.toUpperCase()}_K${i}_V`)).toBe(`v${i}`);
  });

  it('operations held while sync is disabled survive a restart and run when re-enabled', async () => {
    await d.req(
      'PATCH',
      'sys/sync/config',
      { disabled: true },
      { token, headers: { 'Content-Type': 'application/merge-patch+json' } },
    );
    await d.req('POST', 'secret/data/held', { data: { V: 'held' } }, { token });
    await d.req(
      'POST',
      'sys/sync/destinations/hosting-project/web/associations/set',
      { mount: 'secret', secret_name: 'held' },
      { token },
    );
    const accessor = (await d.req('GET', 'sys/mounts', undefined, { token })).body.data['secret/'].accessor as string;
    const name = `VAULT_${accessor.toUpperCase()}_HELD_V`;
    await d.stop();
    d = await start();
    await unseal(d);
    expect((await d.req('GET', 'sys/sync/config', undefined, { token })).body.data.disabled).toBe(true);
    expect(await statuses(d)).toContain('PENDING');
    expect(vc.valueOf(name)).toBeUndefined();
    await d.req(
      'PATCH',
      'sys/sync/config',
      { disabled: false },
      { token, headers: { 'Content-Type': 'application/merge-patch+json' } },
    );
    await until(
      () => vc.valueOf(name),
      (v) => v === 'held',
    );
    await until(
      () => statuses(d),
      (s) => s.every((x) => x === 'SYNCED'),
    );
  });

  it('a change that found the queue full is picked up by reconciliation (also across a restart)', async () => {
    const patch = (body: Record<string, unknown>) =>
      d.req('PATCH', 'sys/sync/config', body, { token, headers: { 'Content-Type': 'application/merge-patch+json' } });
    await patch({ disabled: true, queue_capacity: 1 });
    await d.req('POST', 'secret/data/other', { data: { V: 'o' } }, { token });
    await d.req(
      'POST',
      'sys/sync/destinations/hosting-project/web/associations/set',
      { mount: 'secret', secret_name: 'other' },
      { token },
    );
    const full = await d.req(
      'POST',
      'sys/sync/destinations/hosting-project/web/associations/set',
      { mount: 'secret', secret_name: 'held' },
      { token },
    );
    expect(full.status).toBe(503);
    expect(full.body.errors[0]).toMatch(/sync queue is full \(queue_capacity 1\)/);
    // The KV write cannot be queued: the link stays PENDING with no queue entry.
    await d.req('POST', 'secret/data/k0', { data: { V: 'changed' } }, { token });
    await d.kill();
    d = await start();
    await unseal(d);
    await patch({ disabled: false, queue_capacity: 1000 });
    const accessor = (await d.req('GET', 'sys/mounts', undefined, { token })).body.data['secret/'].accessor as string;
    await until(
      () => vc.valueOf(`VAULT_${accessor.toUpperCase()}_K0_V`),
      (v) => v === 'changed',
    );
    await until(
      () => vc.valueOf(`VAULT_${accessor.toUpperCase()}_OTHER_V`),
      (v) => v === 'o',
    );
  });
});
