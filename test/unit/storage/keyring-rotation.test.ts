import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Barrier } from '../../../src/storage/barrier.js';
import { termOfRecord } from '../../../src/storage/barrier-terms.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import { BarrierKeyring, DEFAULT_MAX_OPERATIONS, TERMS_PATH } from '../../../src/storage/keyring-rotation.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const INIT = '2026-01-01T00:00:00.000Z';

function node(backend: InmemBackend, key: Buffer, clock = { now: () => Date.now() }) {
  const barrier = new Barrier(backend, { cacheBytes: 0 });
  barrier.unseal(key);
  const ring = new BarrierKeyring(backend, barrier, clock, quiet);
  return { barrier, ring };
}

describe('barrier key terms', () => {
  it('writes new records under the newest term and still opens a term-1 record after three rotations', async () => {
    const backend = new InmemBackend();
    const { barrier, ring } = node(backend, randomBytes(32));
    await ring.load();
    await barrier.put('a/one', Buffer.from('written under term 1'));
    for (let i = 0; i < 3; i++) await ring.rotate(INIT);
    await barrier.put('a/four', Buffer.from('written under term 4'));
    expect(termOfRecord((await backend.get('a/one'))!)).toBe(1);
    expect(termOfRecord((await backend.get('a/four'))!)).toBe(4);
    expect((await barrier.get('a/one'))!.toString()).toBe('written under term 1');
    expect((await barrier.get('a/four'))!.toString()).toBe('written under term 4');
    expect(ring.status(INIT).term).toBe(4);
  });

  it('a fresh process (restart) opens records of every term after loading the keyring', async () => {
    const backend = new InmemBackend();
    const key = randomBytes(32);
    const a = node(backend, key);
    await a.ring.load();
    await a.barrier.put('r/1', Buffer.from('one'));
    await a.ring.rotate(INIT);
    await a.barrier.put('r/2', Buffer.from('two'));
    const b = node(backend, key);
    await b.ring.load();
    expect(b.ring.status(INIT).term).toBe(2);
    expect((await b.barrier.get('r/1'))!.toString()).toBe('one');
    expect((await b.barrier.get('r/2'))!.toString()).toBe('two');
  });

  it('a second node on shared storage picks up a term another node installed before opening its records', async () => {
    const backend = new InmemBackend();
    const key = randomBytes(32);
    const active = node(backend, key);
    const standby = node(backend, key);
    await active.ring.load();
    await standby.ring.load();
    await active.ring.rotate(INIT);
    await active.barrier.put('s/x', Buffer.from('new term'));
    expect(standby.ring.status(INIT).term).toBe(1);
    expect((await standby.barrier.get('s/x'))!.toString()).toBe('new term');
    expect(standby.ring.status(INIT).term).toBe(2);
  });

  it('refuses a record whose term byte was altered (the wrong key fails authentication)', async () => {
    const backend = new InmemBackend();
    const { barrier, ring } = node(backend, randomBytes(32));
    await ring.load();
    await ring.rotate(INIT);
    await ring.rotate(INIT);
    await barrier.put('t/x', Buffer.from('v'));
    const rec = (await backend.get('t/x'))!;
    rec.writeUInt32BE(2, 1);
    await backend.put('t/x', rec);
    await expect(barrier.get('t/x')).rejects.toThrow(/failed authentication/);
  });

  it('keeps the keyring of terms sealed: no key bytes at rest in plaintext', async () => {
    const backend = new InmemBackend();
    const { ring } = node(backend, randomBytes(32));
    await ring.load();
    await ring.rotate(INIT);
    const rec = (await backend.get(TERMS_PATH))!;
    expect(rec[0]).toBe(1);
    expect(rec.toString('latin1')).not.toMatch(/install_time|"key"/);
  });

  it('rotates by itself once max_operations encryptions were made, and the count survives a reload', async () => {
    const backend = new InmemBackend();
    const { barrier, ring } = node(backend, randomBytes(32));
    await ring.load();
    expect(ring.config()).toEqual({ enabled: true, max_operations: DEFAULT_MAX_OPERATIONS, interval: 0 });
    await ring.setConfig({ max_operations: 5 }, INIT);
    for (let i = 0; i < 3; i++) await barrier.put(`c/${i}`, Buffer.from('x'));
    await ring.check(INIT);
    expect(ring.status(INIT)).toMatchObject({ term: 1, encryptions: 3 });
    await ring.load();
    expect(ring.status(INIT).encryptions).toBe(3);
    for (let i = 3; i < 5; i++) await barrier.put(`c/${i}`, Buffer.from('x'));
    await ring.check(INIT);
    expect(ring.status(INIT)).toMatchObject({ term: 2, encryptions: 0 });
  });

  it('rotates by itself when the interval has passed since the term was installed, and not when disabled', async () => {
    const backend = new InmemBackend();
    let now = Date.parse('2026-03-01T00:00:00Z');
    const clock = { now: () => now };
    const { ring } = node(backend, randomBytes(32), clock);
    await ring.load();
    await ring.rotate(INIT);
    await ring.setConfig({ interval: 86400 }, INIT);
    now += 86400 * 1000 - 1;
    await ring.check(INIT);
    expect(ring.status(INIT).term).toBe(2);
    now += 1;
    await ring.setConfig({ enabled: false }, INIT);
    await ring.check(INIT);
    expect(ring.status(INIT).term).toBe(2);
    await ring.setConfig({ enabled: true }, INIT);
    await ring.check(INIT);
    expect(ring.status(INIT).term).toBe(3);
  });

  it('goes back to term 1 when the stored keyring disappears (an older snapshot restored), so new records stay openable', async () => {
    const backend = new InmemBackend();
    const key = randomBytes(32);
    const { barrier, ring } = node(backend, key);
    await ring.load();
    await ring.rotate(INIT);
    await backend.delete(TERMS_PATH);
    await ring.load();
    expect(ring.status(INIT).term).toBe(1);
    await barrier.put('after/restore', Buffer.from('x'));
    expect(termOfRecord((await backend.get('after/restore'))!)).toBe(1);
    const fresh = node(backend, key);
    await fresh.ring.load();
    expect((await fresh.barrier.get('after/restore'))!.toString()).toBe('x');
  });
});
