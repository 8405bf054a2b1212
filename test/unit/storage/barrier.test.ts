import { createDecipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { gcm } from '@noble/ciphers/aes.js';
import { Barrier, openRecord, sealRecord } from '../../../src/storage/barrier.js';
import { InmemBackend } from '../../../src/storage/inmem.js';

const key = randomBytes(32);

describe('barrier records', () => {
  it('round-trips and uses a fresh nonce for every record', () => {
    const a = sealRecord(key, 'p', Buffer.from('same'));
    const b = sealRecord(key, 'p', Buffer.from('same'));
    expect(a.equals(b)).toBe(false);
    expect(a.subarray(1, 13).equals(b.subarray(1, 13))).toBe(false);
    expect(openRecord(key, 'p', a).toString()).toBe('same');
  });

  it('is AES-256-GCM with the path as associated data (checked with @noble/ciphers)', () => {
    const rec = sealRecord(key, 'logical/abc/keys/k', Buffer.from('hello'));
    expect(rec[0]).toBe(1);
    const nonce = rec.subarray(1, 13);
    const noble = gcm(key, nonce, Buffer.from('logical/abc/keys/k'));
    expect(Buffer.from(noble.decrypt(rec.subarray(13))).toString()).toBe('hello');
    // And the other way: a record sealed by @noble opens.
    const n2 = randomBytes(12);
    const ct = gcm(key, n2, Buffer.from('x/y')).encrypt(Buffer.from('from noble'));
    expect(openRecord(key, 'x/y', Buffer.concat([Buffer.from([1]), n2, ct])).toString()).toBe('from noble');
  });

  it('rejects a tampered record (any flipped bit)', () => {
    const rec = sealRecord(key, 'p', Buffer.from('secret value'));
    for (let i = 1; i < rec.length; i += 3) {
      const t = Buffer.from(rec);
      t[i]! ^= 0x01;
      expect(() => openRecord(key, 'p', t)).toThrow(/failed authentication/);
    }
  });

  it('rejects a record moved to another path', () => {
    const rec = sealRecord(key, 'sys/policy/a', Buffer.from('{}'));
    expect(() => openRecord(key, 'sys/policy/b', rec)).toThrow(/record at sys\/policy\/b failed authentication/);
  });

  it('rejects a record under another key, a truncated record, and an unknown version', () => {
    const rec = sealRecord(key, 'p', Buffer.from('x'));
    expect(() => openRecord(randomBytes(32), 'p', rec)).toThrow(/failed authentication/);
    expect(() => openRecord(key, 'p', rec.subarray(0, 20))).toThrow(/malformed/);
    const v2 = Buffer.from(rec);
    v2[0] = 2;
    expect(() => openRecord(key, 'p', v2)).toThrow(/malformed/);
  });

  it('never puts the plaintext or the key in an error message', () => {
    const rec = sealRecord(key, 'p', Buffer.from('TOPSECRET'));
    rec[rec.length - 1]! ^= 1;
    try {
      openRecord(key, 'p', rec);
    } catch (e) {
      expect(String(e)).not.toContain('TOPSECRET');
      expect(String(e)).not.toContain(key.toString('hex'));
      expect(String(e)).not.toContain(key.toString('base64'));
    }
  });
});

describe('Barrier storage', () => {
  it('stores only ciphertext in the backend and reads it back', async () => {
    const backend = new InmemBackend();
    const b = new Barrier(backend);
    b.unseal(key);
    await b.put('sys/policy/app', Buffer.from('path "very-secret-path" {}'));
    const raw = await backend.get('sys/policy/app');
    expect(raw!.toString('latin1')).not.toContain('very-secret-path');
    expect((await b.get('sys/policy/app'))!.toString()).toBe('path "very-secret-path" {}');
    expect(await b.get('missing')).toBeNull();
  });

  it('detects records swapped between paths in the backend', async () => {
    const backend = new InmemBackend();
    const b = new Barrier(backend);
    b.unseal(key);
    await b.put('a', Buffer.from('A'));
    await b.put('b', Buffer.from('B'));
    const ra = (await backend.get('a'))!;
    await backend.put('a', (await backend.get('b'))!);
    await backend.put('b', ra);
    // As a fresh process reads them (this one still holds what it wrote).
    b.clearCache();
    await expect(b.get('a')).rejects.toThrow(/failed authentication/);
    await expect(b.get('b')).rejects.toThrow(/failed authentication/);
  });

  it('refuses every operation while sealed and forgets (zeroes) the key on seal', async () => {
    const b = new Barrier(new InmemBackend());
    const k = Buffer.from(key);
    b.unseal(k);
    await b.put('x', Buffer.from('1'));
    b.seal();
    expect(b.sealed).toBe(true);
    await expect(b.get('x')).rejects.toThrow(/sealed/);
    await expect(b.put('x', Buffer.from('2'))).rejects.toThrow(/sealed/);
    await expect(b.list('')).rejects.toThrow(/sealed/);
    await expect(b.delete('x')).rejects.toThrow(/sealed/);
    // The caller's buffer is untouched (the barrier keeps its own copy).
    expect(k.equals(key)).toBe(true);
  });

  it('does not open with a different barrier key', async () => {
    const backend = new InmemBackend();
    const b = new Barrier(backend);
    b.unseal(key);
    await b.put('x', Buffer.from('1'));
    const other = new Barrier(backend);
    other.unseal(randomBytes(32));
    await expect(other.get('x')).rejects.toThrow(/failed authentication/);
  });

  it('agrees with node:crypto decryption done by hand', () => {
    const rec = sealRecord(key, 'p', Buffer.from('abc'));
    const d = createDecipheriv('aes-256-gcm', key, rec.subarray(1, 13));
    d.setAAD(Buffer.from('p'));
    d.setAuthTag(rec.subarray(rec.length - 16));
    expect(Buffer.concat([d.update(rec.subarray(13, rec.length - 16)), d.final()]).toString()).toBe('abc');
  });
});

describe('Barrier read cache', () => {
  const key = randomBytes(32);

  it('serves a record it wrote without a backend read, and returns copies callers may change', async () => {
    const backend = new InmemBackend();
    const b = new Barrier(backend);
    b.unseal(key);
    await b.put('a', Buffer.from('one'));
    let reads = 0;
    const get = backend.get.bind(backend);
    backend.get = async (k: string) => (reads++, get(k));
    const first = (await b.get('a'))!;
    first.write('XYZ');
    expect((await b.get('a'))!.toString()).toBe('one');
    expect(reads).toBe(0);
  });

  it('sees another writer only after forget(key) or clearCache(), as a standby does after a change notice', async () => {
    const backend = new InmemBackend();
    const mine = new Barrier(backend);
    const other = new Barrier(backend);
    mine.unseal(key);
    other.unseal(key);
    await mine.put('k', Buffer.from('v1'));
    expect((await mine.get('k'))!.toString()).toBe('v1');
    await other.put('k', Buffer.from('v2'));
    expect((await mine.get('k'))!.toString()).toBe('v1'); // cached until told
    mine.forget('k');
    expect((await mine.get('k'))!.toString()).toBe('v2');
    await other.put('k', Buffer.from('v3'));
    mine.clearCache();
    expect((await mine.get('k'))!.toString()).toBe('v3');
  });

  it('does not cache a value whose write failed', async () => {
    const backend = new InmemBackend();
    const b = new Barrier(backend);
    b.unseal(key);
    await b.put('k', Buffer.from('old'));
    backend.put = async () => {
      throw new Error('disk full');
    };
    await expect(b.put('k', Buffer.from('new'))).rejects.toThrow('disk full');
    expect((await b.get('k'))!.toString()).toBe('old');
  });

  it('a read that overlapped a write never leaves the old value cached', async () => {
    const backend = new InmemBackend();
    const b = new Barrier(backend);
    b.unseal(key);
    await b.put('k', Buffer.from('old'));
    b.clearCache();
    // The backend answers the read with the old record, but only after the write has finished.
    const get = backend.get.bind(backend);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    backend.get = async (k: string) => {
      const v = await get(k);
      await gate;
      return v;
    };
    const reading = b.get('k');
    await b.put('k', Buffer.from('new'));
    release();
    expect((await reading)!.toString()).toBe('old');
    backend.get = get;
    expect((await b.get('k'))!.toString()).toBe('new');
  });

  it('drops everything on seal, and cacheBytes 0 turns it off', async () => {
    const backend = new InmemBackend();
    const b = new Barrier(backend, { cacheBytes: 0 });
    b.unseal(key);
    await b.put('k', Buffer.from('v'));
    let reads = 0;
    const get = backend.get.bind(backend);
    backend.get = async (k: string) => (reads++, get(k));
    await b.get('k');
    expect(reads).toBe(1);
    const c = new Barrier(backend);
    c.unseal(key);
    await c.put('j', Buffer.from('w'));
    c.seal();
    await expect(c.get('j')).rejects.toThrow(/sealed/);
  });

  it('uses the nonce source it was given (the daemon passes a pooled CSPRNG)', async () => {
    const backend = new InmemBackend();
    const fixed = Buffer.alloc(12, 9);
    const b = new Barrier(backend, { nonce: () => fixed });
    b.unseal(key);
    await b.put('p', Buffer.from('x'));
    const rec = (await backend.get('p'))!;
    expect(rec.subarray(1, 13).equals(fixed)).toBe(true);
    expect(openRecord(key, 'p', rec).toString()).toBe('x');
  });
});
