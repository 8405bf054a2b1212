import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Barrier } from '../../../src/storage/barrier.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import {
  SnapshotCapture,
  applySnapshot,
  backendKeys,
  decodeSnapshot,
  encodeSnapshot,
  readAtCapture,
  type SnapshotHeader,
} from '../../../src/storage/snapshot.js';

const HEADER: SnapshotHeader = {
  format: 1,
  index: 7,
  created: '2026-01-01T00:00:00.000Z',
  storage_id: 's',
  term: 2,
  backend: 'inmem',
  version: 't',
};

describe('snapshot format', () => {
  const records = new Map([
    ['core/a', Buffer.from([1, 2, 3])],
    ['logical/x/y', randomBytes(100)],
    ['empty', Buffer.alloc(0)],
  ]);

  it('round-trips header, manifest and records', () => {
    const s = decodeSnapshot(encodeSnapshot(HEADER, records));
    expect(s.header).toEqual(HEADER);
    expect(s.manifest.records).toBe(3);
    expect([...s.records.keys()]).toEqual(['core/a', 'empty', 'logical/x/y']);
    expect(s.records.get('logical/x/y')).toEqual(records.get('logical/x/y'));
  });

  it('refuses every single-byte alteration and every truncation', () => {
    const buf = encodeSnapshot(HEADER, records);
    for (let i = 0; i < buf.length; i += 7) {
      const bad = Buffer.from(buf);
      bad[i] ^= 0x40;
      expect(() => decodeSnapshot(bad), `byte ${i}`).toThrow();
    }
    for (const n of [0, 8, 20, buf.length - 33, buf.length - 1])
      expect(() => decodeSnapshot(buf.subarray(0, n)), `first ${n} bytes`).toThrow();
  });
});

describe('point-in-time capture', () => {
  it('reads the store as it was when the capture opened, whatever is written while it reads', async () => {
    const backend = new InmemBackend();
    const barrier = new Barrier(backend, { cacheBytes: 0 });
    barrier.unseal(randomBytes(32));
    for (let i = 0; i < 50; i++) await barrier.put(`k/${i}`, Buffer.from(`v${i}`));
    const before = new Map<string, Buffer>();
    for (const k of await backendKeys(backend)) before.set(k, (await backend.get(k))!);
    const capture = new SnapshotCapture(backend);
    await barrier.openCapture(capture);
    // Writes, deletes and new keys racing the reader.
    const writer = (async () => {
      for (let i = 0; i < 50; i++) {
        if (i % 3 === 0) await barrier.delete(`k/${i}`);
        else await barrier.put(`k/${i}`, Buffer.from(`changed${i}`));
        await barrier.put(`new/${i}`, Buffer.from('n'));
      }
    })();
    const got = await readAtCapture(backend, capture);
    await writer;
    barrier.closeCapture();
    expect([...got.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [k, v] of before) expect(got.get(k)!.equals(v), k).toBe(true);
  });

  it('applySnapshot makes the backend hold exactly the records', async () => {
    const backend = new InmemBackend();
    await backend.put('a', Buffer.from('old'));
    await backend.put('gone', Buffer.from('x'));
    const r = await applySnapshot(
      backend,
      new Map([
        ['a', Buffer.from('new')],
        ['b', Buffer.from('b')],
      ]),
    );
    expect(r).toEqual({ written: 2, deleted: 1 });
    expect(await backendKeys(backend)).toEqual(['a', 'b']);
    expect((await backend.get('a'))!.toString()).toBe('new');
  });
});
