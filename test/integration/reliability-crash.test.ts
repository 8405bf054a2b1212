import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanup, type Daemon } from '../support/daemon.js';
import {
  Ledger,
  SYNC_DEST,
  initialize,
  must,
  prng,
  runLoad,
  seed,
  startFileDaemon,
  syncWorker,
  unseal,
  verify,
  verifySync,
} from '../support/crash-harness.js';
import { VercelFake } from '../fakes/vercel.js';
import { until } from '../fakes/wait.js';

const KILLS = Number(process.env.CRASH_KILLS ?? 50);
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 2 ** 31);

// Fast sync retries so the queue drains within the test.
const SYNC_ENV = {
  KEYHOLD_SYNC_SET_WAIT_MS: '0',
  KEYHOLD_SYNC_RETRY_BASE_MS: '100',
  KEYHOLD_SYNC_RETRY_MAX_MS: '500',
  KEYHOLD_SYNC_TIMEOUT_MS: '5000',
  KEYHOLD_SYNC_RECONCILE_MS: '1000',
};

const dirs: string[] = [];
const fake = new VercelFake();
afterAll(async () => {
  for (const d of dirs) cleanup(d);
  await fake.stop();
});

/** Every file under `root` (recursively) with its mode. */
function walk(root: string): Array<{ path: string; mode: number; dir: boolean }> {
  const out: Array<{ path: string; mode: number; dir: boolean }> = [];
  for (const name of readdirSync(root)) {
    const p = join(root, name);
    const st = statSync(p);
    out.push({ path: p, mode: st.mode & 0o777, dir: st.isDirectory() });
    if (st.isDirectory()) out.push(...walk(p));
  }
  return out;
}

describe('crash safety (SIGKILL during mixed load, restart on the same file storage)', () => {
  it(`survives ${KILLS} kills: acknowledged writes present, nothing half-written, old ciphertexts decrypt`, {
    timeout: 600_000,
  }, async () => {
    console.log(`crash harness seed=${SEED} kills=${KILLS} (replay: CRASH_SEED=${SEED})`);
    const rnd = prng(SEED);
    const dir = mkdtempSync(join(tmpdir(), 'keyhold-crash-'));
    dirs.push(dir);
    await fake.start();
    let d: Daemon = await startFileDaemon(dir, [], SYNC_ENV);
    const { key, root } = await initialize(d);
    await must(d, 'POST', 'sys/mounts/transit', { type: 'transit' });
    await must(d, 'POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } });
    await must(d, 'POST', SYNC_DEST, {
      access_token: fake.token,
      project_id: fake.projectId,
      team_id: fake.teamId,
      deployment_environments: ['production'],
      endpoint_url: fake.url,
      allowed_ipv4_addresses: ['127.0.0.1/32'],
      allowed_ports: [fake.server.port],
    });
    const ledger = new Ledger();
    await seed(d, ledger);
    let survived = 0;
    for (let i = 0; i < KILLS; i++) {
      const load = runLoad(d, ledger, rnd, i, [syncWorker(d, ledger, rnd)]);
      // Kill at a random moment of the load (the first requests are in flight after a few ms).
      const delay = 20 + Math.floor(rnd() * 350);
      await new Promise((r) => setTimeout(r, delay));
      await d.kill();
      await load;
      d = await startFileDaemon(dir, [], SYNC_ENV);
      await unseal(d, key, root);
      await verify(d, ledger);
      await verifySync(d, ledger);
      survived++;
    }
    // The sync queue drains after the last restart: every associated secret reaches the provider with its latest value.
    const accessor = (await must(d, 'GET', 'sys/mounts')).body.data['secret/'].accessor as string;
    await until(
      () => verifySync(d, ledger),
      (m) => [...m.values()].every((s) => s === 'SYNCED'),
      60_000,
      200,
    );
    for (const name of ledger.syncAssociated) {
      const slot = ledger.kv.get(name)!;
      const envName = `VAULT_${accessor}_${name.replace('/', '_')}_V`.toUpperCase();
      await until(
        () => fake.valueOf(envName),
        (v) => v === slot.versions.get(slot.latest)!.V,
        30_000,
        100,
      );
    }
    console.log(
      `crash harness: ${survived} kills survived, ${ledger.acked} acknowledged writes, ${ledger.checked} checks, ${ledger.keys.size} keys, ${ledger.syncAssociated.size} synced secrets`,
    );
    expect(survived).toBe(KILLS);
    expect(ledger.acked).toBeGreaterThan(KILLS);
    // Storage files 0600, folders 0700 (no leftover temp file is readable by others either).
    const files = walk(join(dir, 'data'));
    const segments = files.filter((f) => !f.dir && /\/log\/\d{16}\.(seg|cmp)$/.test(f.path));
    expect(segments.length).toBeGreaterThan(0);
    // 50 restarts each began a segment; compaction keeps them from piling up (each holds a descriptor).
    expect(segments.length).toBeLessThanOrEqual(18);
    for (const f of files)
      expect({ path: f.path, mode: f.mode }).toEqual({ path: f.path, mode: f.dir ? 0o700 : 0o600 });
    await d.stop();
  });
});
