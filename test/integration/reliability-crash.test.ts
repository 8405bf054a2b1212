import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanup, type Daemon } from '../support/daemon.js';
import { Ledger, initialize, must, prng, runLoad, seed, startFileDaemon, unseal, verify } from '../support/crash-harness.js';

const KILLS = Number(process.env.CRASH_KILLS ?? 50);
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 2 ** 31);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) cleanup(d);
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
  it(`survives ${KILLS} kills: acknowledged writes present, nothing half-written, old ciphertexts decrypt`, { timeout: 600_000 }, async () => {
    console.log(`crash harness seed=${SEED} kills=${KILLS} (replay: CRASH_SEED=${SEED})`);
    const rnd = prng(SEED);
    const dir = mkdtempSync(join(tmpdir(), 'keyhold-crash-'));
    dirs.push(dir);
    let d: Daemon = await startFileDaemon(dir);
    const { key, root } = await initialize(d);
    await must(d, 'POST', 'sys/mounts/transit', { type: 'transit' });
    await must(d, 'POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } });
    const ledger = new Ledger();
    await seed(d, ledger);
    let survived = 0;
    for (let i = 0; i < KILLS; i++) {
      const load = runLoad(d, ledger, rnd, i);
      // Kill at a random moment of the load (the first requests are in flight after a few ms).
      const delay = 20 + Math.floor(rnd() * 350);
      await new Promise((r) => setTimeout(r, delay));
      await d.kill();
      await load;
      d = await startFileDaemon(dir);
      await unseal(d, key, root);
      await verify(d, ledger);
      survived++;
    }
    console.log(`crash harness: ${survived} kills survived, ${ledger.acked} acknowledged writes, ${ledger.checked} checks, ${ledger.keys.size} keys`);
    expect(survived).toBe(KILLS);
    expect(ledger.acked).toBeGreaterThan(KILLS);
    // Storage files 0600, folders 0700 (no leftover temp file is readable by others either).
    const files = walk(join(dir, 'data'));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) expect({ path: f.path, mode: f.mode }).toEqual({ path: f.path, mode: f.dir ? 0o700 : 0o600 });
    await d.stop();
  });
});
