import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { execa } from 'execa';
import { BIN, cleanup, startDaemon, type Daemon } from '../support/daemon.js';
import { initialize, startFileDaemon } from '../support/crash-harness.js';

const CLIENTS = 50;
const OPS_PER_CLIENT = 30;
const ROTATORS = 5;
const ROTATIONS_EACH = 6;
const TOO_OLD = 'ciphertext or signature version is disallowed by policy (too old)';

let d: Daemon;
beforeAll(async () => {
  d = await startDaemon();
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

function versionOf(ct: string): number {
  return Number(/^vault:v(\d+):/.exec(ct)![1]);
}

describe('concurrency: 50 clients encrypt and decrypt while others rotate, raise min_decryption_version and trim', () => {
  it('gives every operation a correct result or the documented error, loses no rotation, ends with the exact version count', {
    timeout: 120_000,
  }, async () => {
    expect((await d.req('POST', 'transit/keys/conc', { type: 'aes256-gcm96' })).status).toBe(200);
    const pool: Array<{ ct: string; pt: string }> = [];
    const counts = { encrypt: 0, decrypt: 0, tooOld: 0, rotate: 0, config: 0, trim: 0 };
    let running = true;

    const client = async (c: number) => {
      for (let i = 0; i < OPS_PER_CLIENT; i++) {
        const pt = randomBytes(1 + ((c * 31 + i) % 48)).toString('base64');
        const e = await d.req('POST', 'transit/encrypt/conc', { plaintext: pt });
        expect(e.status, e.text).toBe(200);
        counts.encrypt++;
        const ct: string = e.body.data.ciphertext;
        expect(versionOf(ct)).toBe(e.body.data.key_version);
        pool.push({ ct, pt });
        // Decrypt our own and one older ciphertext from the shared pool.
        const old = pool[(c * 7919 + i * 104729) % pool.length]!;
        for (const item of [{ ct, pt }, old]) {
          const r = await d.req('POST', 'transit/decrypt/conc', { ciphertext: item.ct });
          counts.decrypt++;
          if (r.status === 200) expect(r.body.data.plaintext).toBe(item.pt);
          else {
            expect(r.status, r.text).toBe(400);
            expect(r.body.errors).toEqual([TOO_OLD]);
            counts.tooOld++;
          }
        }
      }
    };

    const rotator = async () => {
      for (let i = 0; i < ROTATIONS_EACH; i++) {
        const r = await d.req('POST', 'transit/keys/conc/rotate');
        expect(r.status, r.text).toBe(200);
        counts.rotate++;
        // Spread the rotations over the clients' run.
        await new Promise((res) => setTimeout(res, 200 + ((i * 37) % 100)));
      }
    };

    const admin = async () => {
      while (running) {
        const k = await d.req('GET', 'transit/keys/conc');
        const latest: number = k.body.data.latest_version;
        const floor = Math.max(k.body.data.min_decryption_version, latest - 3);
        const cfg = await d.req('POST', 'transit/keys/conc/config', {
          min_decryption_version: floor,
          min_encryption_version: floor,
        });
        expect(cfg.status, cfg.text).toBe(200);
        counts.config++;
        const t = await d.req('POST', 'transit/keys/conc/trim', { min_available_version: floor });
        // Another admin step may have moved the floor; only "cannot be decremented" is acceptable then.
        if (t.status !== 200) expect(t.body.errors[0]).toMatch(/minimum available version cannot be/);
        else counts.trim++;
        await new Promise((res) => setTimeout(res, 10));
      }
    };

    const clients = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    const rotators = Promise.all(Array.from({ length: ROTATORS }, rotator));
    const adminDone = admin();
    await Promise.all([clients, rotators]);
    running = false;
    await adminDone;

    const k = (await d.req('GET', 'transit/keys/conc')).body.data;
    expect(k.latest_version).toBe(1 + ROTATORS * ROTATIONS_EACH);
    const minDec: number = k.min_decryption_version;
    expect(
      Object.keys(k.keys)
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: k.latest_version - minDec + 1 }, (_, i) => minDec + i));
    // Every ciphertext at or above the final floor still decrypts; every refused one was below it.
    const keep = pool.filter((p) => versionOf(p.ct) >= minDec);
    for (let i = 0; i < keep.length; i += 500) {
      const chunk = keep.slice(i, i + 500);
      const r = await d.req('POST', 'transit/decrypt/conc', { batch_input: chunk.map((p) => ({ ciphertext: p.ct })) });
      expect(r.status).toBe(200);
      r.body.data.batch_results.forEach((res: { plaintext: string }, j: number) =>
        expect(res.plaintext).toBe(chunk[j]!.pt),
      );
    }
    const checked = counts.encrypt + counts.decrypt + counts.rotate + counts.config + counts.trim + keep.length;
    console.log(
      `concurrency: ${checked} operations checked (${JSON.stringify(counts)}), final latest ${k.latest_version}, min_decryption_version ${minDec}`,
    );
    expect(counts.encrypt).toBe(CLIENTS * OPS_PER_CLIENT);
  });
});

describe('two daemons on one file storage', () => {
  it('refuses to start the second with a clear message naming the storage and the holder', {
    timeout: 60_000,
  }, async () => {
    const first = await startFileDaemon();
    try {
      await initialize(first);
      const r = await execa(
        process.execPath,
        [
          BIN,
          'server',
          '--storage-path',
          join(first.dir, 'data'),
          '--socket',
          join(first.dir, 'second.sock'),
          '--keychain',
          'none',
        ],
        {
          reject: false,
          timeout: 20_000,
          env: { KEYHOLD_HOME: first.dir },
        },
      );
      expect(r.exitCode).not.toBe(0);
      expect(r.stderr).toContain(
        `storage at ${join(first.dir, 'data')} is in use by another keyhold daemon (pid ${first.proc.pid})`,
      );
      // The first is unharmed.
      expect((await first.req('GET', 'sys/health')).status).toBe(200);
    } finally {
      await first.stop();
      cleanup(first.dir);
    }
  });
});
