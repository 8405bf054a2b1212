import { describe, expect, test } from 'vitest';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { TransitKeyStore } from '../../../src/engines/transit/keyring/key-store.js';
import { AutoRotator } from '../../../src/engines/transit/keyring/auto-rotate.js';
import { LoadedVersion } from '../../../src/engines/transit/keyring/material.js';
import { checkTrim } from '../../../src/engines/transit/keyring/key-rules.js';
import { invalid } from '../../../src/framework/errors.js';
import { manualClock, memStorage, quietLogger } from './helpers.js';

const missing = () => invalid('key not found');
const refuse = (m: string) => invalid(m);

function store(s = memStorage(), clock = manualClock(), cache = 0) {
  return { s, clock, keys: new TransitKeyStore(s, clock, quietLogger(), cache) };
}

describe('TransitKeyStore', () => {
  test('stores each version as its own record and the configuration apart', async () => {
    const { s, keys } = store();
    await keys.create('k', { type: 'aes256-gcm96' });
    await keys.rotate('k', missing, refuse);
    expect(await s.list('versions/k/')).toEqual(['1', '2']);
    expect(await s.list('policy/')).toEqual(['k']);
    const policy = JSON.parse((await s.get('policy/k'))!.toString());
    expect(policy.latestVersion).toBe(2);
    expect(JSON.stringify(policy)).not.toContain('hmac');
  });

  test('creates a key once under concurrent creates', async () => {
    const { keys } = store();
    const results = await Promise.all(Array.from({ length: 8 }, () => keys.create('k', { type: 'ed25519' })));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.key.versions.get(1)!.key!.toString('hex'))).size).toBe(1);
  });

  test('serialises concurrent rotations: every version number once, fresh material each', async () => {
    const { keys } = store();
    await keys.create('k', { type: 'aes128-gcm96' });
    await Promise.all(Array.from({ length: 40 }, () => keys.rotate('k', missing, refuse)));
    const k = (await keys.get('k'))!;
    expect(k.latestVersion).toBe(41);
    expect(new Set([...k.versions.values()].map((v) => v.key!.toString('hex'))).size).toBe(41);
    expect(new Set([...k.versions.values()].map((v) => v.hmacKey.toString('hex'))).size).toBe(41);
    expect([...k.versions.values()].every((v) => v.key!.length === 16)).toBe(true);
  });

  test('a fresh store (after restart) loads what an earlier one wrote', async () => {
    const a = store();
    await a.keys.create('sig', { type: 'ecdsa-p256' });
    await a.keys.rotate('sig', missing, refuse);
    const b = new TransitKeyStore(a.s, a.clock, quietLogger());
    const k = (await b.get('sig'))!;
    expect(k.latestVersion).toBe(2);
    const before = (await a.keys.get('sig'))!.versions.get(2)!.publicKey!.export({ format: 'der', type: 'spki' });
    expect(
      Buffer.from(k.versions.get(2)!.publicKey!.export({ format: 'der', type: 'spki' })).equals(Buffer.from(before)),
    ).toBe(true);
  });

  test('a key with 10,000 versions loads, rotates and encrypts normally', async () => {
    const { s, clock, keys } = store();
    const { key } = await keys.create('big', { type: 'aes256-gcm96' });
    // Write 9,999 more versions straight through the store (as 9,999 rotations would).
    const t0 = performance.now();
    for (let n = 2; n <= 10_000; n++) {
      const v = new LoadedVersion({ version: n, key: randomBytes(32), hmacKey: randomBytes(32), creationTime: 1 + n });
      await keys.writeVersion(key, v);
    }
    key.latestVersion = 10_000;
    await keys.writePolicy(key);
    const written = performance.now() - t0;
    const fresh = new TransitKeyStore(s, clock, quietLogger());
    const t1 = performance.now();
    const k = (await fresh.get('big'))!;
    const loaded = performance.now() - t1;
    expect(k.versions.size).toBe(10_000);
    const t2 = performance.now();
    await fresh.rotate('big', missing, refuse);
    const rotated = performance.now() - t2;
    expect(k.latestVersion).toBe(10_001);
    expect(await s.get('versions/big/10001')).not.toBeNull();
    // "Encrypts normally": AES-GCM with the latest and with an old version's key round-trips.
    for (const n of [10_001, 5_000]) {
      const kv = k.versions.get(n)!.key!;
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', kv, iv);
      const ct = Buffer.concat([c.update('hello'), c.final()]);
      const d = createDecipheriv('aes-256-gcm', kv, iv).setAuthTag(c.getAuthTag());
      expect(Buffer.concat([d.update(ct), d.final()]).toString()).toBe('hello');
    }
    // Rotation writes one version record and the policy, whatever the history.
    const policySize = (await s.get('policy/big'))!.length;
    expect(policySize).toBeLessThan(1024);
    console.log(
      `10,000 versions: write ${written.toFixed(0)} ms, load ${loaded.toFixed(0)} ms, rotate ${rotated.toFixed(1)} ms, policy record ${policySize} bytes`,
    );
  }, 60_000);

  test('trim removes the version records below the floor for good', async () => {
    const { s, keys } = store();
    await keys.create('k', { type: 'chacha20-poly1305' });
    for (let i = 0; i < 4; i++) await keys.rotate('k', missing, refuse);
    await keys.update('k', missing, (d) => {
      d.minDecryptionVersion = 3;
      d.minEncryptionVersion = 4;
    });
    await keys.withLock('k', 'exclusive', async () => {
      const k = (await keys.get('k'))!;
      checkTrim(k, 3);
      await keys.trimLocked(k, 3);
    });
    expect(await s.list('versions/k/')).toEqual(['3', '4', '5']);
    const again = (await new TransitKeyStore(s, manualClock(), quietLogger()).get('k'))!;
    expect([...again.versions.keys()]).toEqual([3, 4, 5]);
    expect(again.minAvailableVersion).toBe(3);
  });

  test('delete removes the configuration and every version', async () => {
    const { s, keys } = store();
    await keys.create('k', { type: 'hmac', keySize: 64 });
    await keys.rotate('k', missing, refuse);
    await keys.withLock('k', 'exclusive', async () => keys.deleteLocked((await keys.get('k'))!));
    expect(await keys.get('k')).toBeNull();
    expect(await s.list('versions/')).toEqual([]);
    expect(await s.list('policy/')).toEqual([]);
  });

  test('an LRU-sized cache still serves every key', async () => {
    const { keys } = store(memStorage(), manualClock(), 10);
    for (let i = 0; i < 25; i++) await keys.create(`k${i}`, { type: 'aes128-gcm96' });
    expect(keys.cacheInfo()).toEqual({ size: 10, count: 10 });
    for (let i = 0; i < 25; i++) expect((await keys.get(`k${i}`))!.name).toBe(`k${i}`);
    expect(keys.cacheInfo().count).toBe(10);
  });

  test('a load racing a rotation after an LRU eviction never leaves a stale key in the cache', async () => {
    const s = memStorage();
    const gates = new Map<string, Promise<void>>();
    const gate = (k: string) => {
      let open!: () => void;
      gates.set(k, new Promise<void>((r) => (open = r)));
      return () => {
        gates.delete(k);
        open();
      };
    };
    const slow = {
      ...s,
      get: async (k: string) => (await gates.get('get ' + k), s.get(k)),
      put: async (k: string, v: Buffer) => (await gates.get('put ' + k), s.put(k, v)),
    };
    const keys = new TransitKeyStore(slow, manualClock(), quietLogger(), 10);
    await keys.create('k', { type: 'aes256-gcm96' });
    const openPut = gate('put versions/k/2');
    const rotation = keys.rotate('k', missing, refuse); // holds the cached object, blocked writing v2
    await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 10; i++) await keys.create(`other${i}`, { type: 'aes128-gcm96' }); // evicts k
    const openGet = gate('get versions/k/1');
    const racing = keys.get('k'); // reads the old policy, then waits on version 1
    await new Promise((r) => setTimeout(r, 5));
    openPut();
    await rotation;
    openGet();
    expect((await racing)!.latestVersion).toBe(2);
    expect((await keys.get('k'))!.latestVersion).toBe(2);
    const v2 = (await s.get('versions/k/2'))!.toString();
    await keys.rotate('k', missing, refuse);
    expect((await s.get('versions/k/2'))!.toString()).toBe(v2);
  });

  test('failed persistence leaves the live key unchanged', async () => {
    const s = memStorage();
    const { keys } = store(s);
    await keys.create('k', { type: 'aes256-gcm96' });
    const put = s.put;
    s.put = async () => Promise.reject(new Error('disk full'));
    await expect(keys.update('k', missing, (d) => void (d.deletionAllowed = true))).rejects.toThrow('disk full');
    s.put = put;
    expect((await keys.get('k'))!.deletionAllowed).toBe(false);
  });
});

describe('AutoRotator', () => {
  test('rotates a key once its latest version is older than the period, and only then', async () => {
    const s = memStorage();
    const clock = manualClock();
    const keys = new TransitKeyStore(s, clock, quietLogger());
    const rot = new AutoRotator(keys, clock, quietLogger());
    await keys.create('r', { type: 'aes256-gcm96', autoRotatePeriod: 3600 });
    await keys.create('never', { type: 'aes256-gcm96' });
    await rot.runOnce(true);
    expect((await keys.get('r'))!.latestVersion).toBe(1);
    clock.advance(3601_000);
    await rot.runOnce(false);
    expect((await keys.get('r'))!.latestVersion).toBe(2);
    expect((await keys.get('never'))!.latestVersion).toBe(1);
    await rot.runOnce(false);
    expect((await keys.get('r'))!.latestVersion).toBe(2);
    await rot.stop();
  });

  test('a start-up scan finds keys that came due while nothing was running (restart)', async () => {
    const s = memStorage();
    const clock = manualClock();
    const first = new TransitKeyStore(s, clock, quietLogger());
    await first.create('r', { type: 'ed25519', autoRotatePeriod: 7200 });
    clock.advance(3 * 3600_000);
    const keys = new TransitKeyStore(s, clock, quietLogger());
    const rot = new AutoRotator(keys, clock, quietLogger());
    await rot.runOnce(true);
    expect((await keys.get('r'))!.latestVersion).toBe(2);
    expect(rot.dueAt('r')).toBe((clock.ms / 1000 + 7200) * 1000);
    await rot.stop();
  });

  test('skips imported keys without allow_rotation', async () => {
    const s = memStorage();
    const clock = manualClock();
    const keys = new TransitKeyStore(s, clock, quietLogger());
    const rot = new AutoRotator(keys, clock, quietLogger());
    await keys.create('imp', { type: 'aes256-gcm96', autoRotatePeriod: 3600 });
    await keys.update('imp', missing, (d) => void (d.importedKey = true));
    clock.advance(7200_000);
    await rot.runOnce(true);
    expect((await keys.get('imp'))!.latestVersion).toBe(1);
    await rot.stop();
  });
});
