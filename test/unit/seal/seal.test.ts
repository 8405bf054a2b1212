import { createDecipheriv, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  initializeStorage,
  masterFromRecoveryKey,
  openKeyring,
  readSealConfig,
  recoveryKeyOf,
} from '../../../src/seal/seal.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import { NoKeychain } from '../../../src/seal/keychain.js';
import { OsKeychain } from '../../../src/seal/os-keychain.js';

describe('seal: master key and keyring record', () => {
  it('initialises once, and opens the barrier key only with the right master key', async () => {
    const b = new InmemBackend();
    const { master, barrierKey, config } = await initializeStorage(b, 'acct');
    expect(master.length).toBe(32);
    expect(barrierKey.length).toBe(32);
    expect(config).toMatchObject({ version: 1, keychain_account: 'acct' });
    expect(await readSealConfig(b)).toEqual(config);
    expect((await openKeyring(b, master)).equals(barrierKey)).toBe(true);
    await expect(openKeyring(b, randomBytes(32))).rejects.toThrow(
      /^invalid key: the recovery key does not open this storage$/,
    );
    await expect(initializeStorage(b, null)).rejects.toThrow(/already initialized/);
  });

  it('stores the keyring as AES-256-GCM under the master key with its path as AAD (checked by hand)', async () => {
    const b = new InmemBackend();
    const { master, barrierKey } = await initializeStorage(b, null);
    const rec = (await b.get('core/keyring'))!;
    expect(rec[0]).toBe(1);
    const d = createDecipheriv('aes-256-gcm', master, rec.subarray(1, 13));
    d.setAAD(Buffer.from('core/keyring'));
    d.setAuthTag(rec.subarray(rec.length - 16));
    const json = JSON.parse(Buffer.concat([d.update(rec.subarray(13, rec.length - 16)), d.final()]).toString());
    expect(Buffer.from(json.barrier_key, 'base64').equals(barrierKey)).toBe(true);
    expect(rec.includes(barrierKey)).toBe(false);
    // A flipped bit is refused, not misread.
    rec[20]! ^= 1;
    await b.put('core/keyring', rec);
    await expect(openKeyring(b, master)).rejects.toThrow(/invalid key/);
  });

  it('round-trips the recovery key and rejects keys of the wrong size', () => {
    const m = randomBytes(32);
    expect(masterFromRecoveryKey(recoveryKeyOf(m)).equals(m)).toBe(true);
    expect(masterFromRecoveryKey(`  ${recoveryKeyOf(m)}\n`).equals(m)).toBe(true);
    expect(() => masterFromRecoveryKey(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
    expect(() => masterFromRecoveryKey('')).toThrow(/32 bytes/);
  });

  it('has a keychain stand-in that never answers', async () => {
    const k = new NoKeychain();
    await expect(k.get('a')).rejects.toThrow(/no keychain/);
    await expect(k.set('a', Buffer.alloc(1))).rejects.toThrow(/no keychain/);
    expect(k.describe()).toBe('none');
  });
});

const secretService = process.env.KEYHOLD_SECRET_SERVICE === '1';
describe.skipIf(!secretService)('OS keychain against the real Secret Service', () => {
  it('sets, gets and deletes a secret that libsecret (secret-tool) sees too', async () => {
    const k = new OsKeychain('keyhold-unit-test');
    const account = `acct-${randomBytes(4).toString('hex')}`;
    const secret = randomBytes(32);
    expect(await k.get(account)).toBeNull();
    await k.set(account, secret);
    expect((await k.get(account))!.equals(secret)).toBe(true);
    const seen = execFileSync('secret-tool', ['lookup', 'service', 'keyhold-unit-test', 'username', account], {
      encoding: 'utf8',
    });
    expect(Buffer.from(seen.trim(), 'base64').equals(secret)).toBe(true);
    await k.delete(account);
    expect(await k.get(account)).toBeNull();
    expect(k.describe()).toBe('secret-service');
  });
});
