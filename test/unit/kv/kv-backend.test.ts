import { describe, expect, it } from 'vitest';
import { allKeys, makeKv } from './fake-env.js';

const base = { mountAccessor: 'kv_0badc0de', mountPath: 'secret/' };

describe('KvBackend events', () => {
  it('emits one event per change with every field filled', async () => {
    const { kv, events } = makeKv();
    await kv.writeData('app/db', { a: '1' }, undefined);
    await kv.patchData('app/db', { b: '2' }, undefined);
    await kv.deleteLatest('app/db');
    await kv.undeleteVersions('app/db', [2]);
    await kv.deleteVersions('app/db', [1, 1]);
    await kv.destroyVersions('app/db', [1]);
    await kv.writeMetadata('app/db', { maxVersions: 3 });
    await kv.patchMetadata('app/db', { customMetadata: { owner: 'ops' } });
    await kv.deleteMetadata('app/db');
    expect(events).toEqual([
      { ...base, kind: 'data-write', path: 'app/db', version: 1, currentVersion: 1 },
      { ...base, kind: 'data-patch', path: 'app/db', version: 2, currentVersion: 2 },
      { ...base, kind: 'data-delete', path: 'app/db', version: 2, currentVersion: 2 },
      { ...base, kind: 'undelete', path: 'app/db', version: 2, versions: [2], currentVersion: 2 },
      { ...base, kind: 'delete', path: 'app/db', version: 2, versions: [1], currentVersion: 2 },
      { ...base, kind: 'destroy', path: 'app/db', version: 2, versions: [1], currentVersion: 2 },
      { ...base, kind: 'metadata-write', path: 'app/db', version: 2, currentVersion: 2 },
      { ...base, kind: 'metadata-patch', path: 'app/db', version: 2, currentVersion: 2 },
      { ...base, kind: 'metadata-delete', path: 'app/db', version: 2, currentVersion: 0 },
    ]);
  });

  it('emits nothing for changes to a missing secret or a failed check-and-set', async () => {
    const { kv, events } = makeKv();
    await kv.deleteLatest('nope');
    await kv.deleteVersions('nope', [1]);
    await kv.destroyVersions('nope', [1]);
    await kv.deleteMetadata('nope');
    expect(await kv.patchData('nope', { a: 1 }, undefined)).toEqual({ kind: 'missing' });
    await kv.writeData('x', { a: 1 }, undefined);
    events.length = 0;
    await expect(kv.writeData('x', { a: 2 }, { cas: 0 })).rejects.toThrow(
      'check-and-set parameter did not match the current version',
    );
    expect(events).toEqual([]);
  });

  it('emits after the lock is released, so a listener can read the new version', async () => {
    const { kv } = makeKv();
    const seen: unknown[] = [];
    kv.env.events.on('kv', (e) => {
      void kv.readLatest(e.path).then((r) => seen.push(r));
    });
    await kv.writeData('s', { v: 1 }, undefined);
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual([{ data: { v: 1 }, version: 1 }]);
  });
});

describe('KvBackend data', () => {
  it('keeps every version readable and returns the current one by default', async () => {
    const { kv } = makeKv();
    for (let i = 1; i <= 3; i++) await kv.writeData('k', { i }, undefined);
    expect(await kv.readData('k')).toMatchObject({ gone: false, data: { i: 3 }, metadata: { version: 3 } });
    expect(await kv.readData('k', 1)).toMatchObject({ gone: false, data: { i: 1 }, metadata: { version: 1 } });
    expect(await kv.readData('k', 4)).toBeNull();
    expect(await kv.readData('other')).toBeNull();
  });

  it('applies Vault check-and-set rules', async () => {
    const { kv } = makeKv();
    await expect(kv.writeData('k', { a: 1 }, { cas: 1 })).rejects.toThrow(
      'check-and-set parameter did not match the current version',
    );
    await kv.writeData('k', { a: 1 }, { cas: 0 });
    await expect(kv.writeData('k', { a: 2 }, { cas: 0 })).rejects.toThrow('did not match');
    await kv.writeData('k', { a: 2 }, { cas: '1' });
    await kv.setConfig({ casRequired: true });
    await expect(kv.writeData('k', { a: 3 }, undefined)).rejects.toThrow(
      'check-and-set parameter required for this call',
    );
    await expect(kv.writeData('k', { a: 3 }, {})).rejects.toThrow('check-and-set parameter required for this call');
    await kv.writeData('k', { a: 3 }, { cas: 2 });
  });

  it('requires check-and-set when the secret sets cas_required', async () => {
    const { kv } = makeKv();
    await kv.writeMetadata('k', { casRequired: true });
    await expect(kv.writeData('k', { a: 1 }, undefined)).rejects.toThrow(
      'check-and-set parameter required for this call',
    );
    await kv.writeData('k', { a: 1 }, { cas: 0 });
  });

  it('lets exactly one of two concurrent writers with the same cas win', async () => {
    const { kv } = makeKv();
    await kv.writeData('k', { v: 0 }, undefined);
    const results = await Promise.allSettled([
      kv.writeData('k', { v: 'a' }, { cas: 1 }),
      kv.writeData('k', { v: 'b' }, { cas: 1 }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect((await kv.metadataOf('k'))?.currentVersion).toBe(2);
  });

  it('merge-patches the current version into a new one', async () => {
    const { kv } = makeKv();
    await kv.writeData('k', { a: 1, b: { c: 2, d: 3 } }, undefined);
    const r = await kv.patchData('k', { a: null, b: { c: 9 }, e: 'x' }, undefined);
    expect(r).toMatchObject({ kind: 'ok', metadata: { version: 2 } });
    expect(await kv.readLatest('k')).toEqual({ data: { b: { c: 9, d: 3 }, e: 'x' }, version: 2 });
  });

  it('refuses to patch a soft-deleted current version, answering with its metadata', async () => {
    const { kv } = makeKv();
    await kv.writeData('k', { a: 1 }, undefined);
    await kv.deleteLatest('k');
    const r = await kv.patchData('k', { a: 2 }, undefined);
    expect(r.kind).toBe('gone');
    expect(r.kind === 'gone' && r.metadata.deletion_time).not.toBe('');
  });
});

describe('KvBackend soft delete, undelete, destroy', () => {
  it('soft-deletes and undeletes, keeping the data', async () => {
    const { kv, clock } = makeKv();
    await kv.writeData('k', { a: 1 }, undefined);
    clock.ms += 1000;
    await kv.deleteLatest('k');
    clock.ms += 1;
    const r = await kv.readData('k');
    expect(r).toMatchObject({ gone: true, metadata: { version: 1, destroyed: false } });
    expect(r?.metadata.deletion_time).toMatch(/^2024-01-02T03:04:06\.\d+Z$/);
    expect(await kv.readLatest('k')).toBeNull();
    await kv.undeleteVersions('k', [1]);
    expect(await kv.readLatest('k')).toEqual({ data: { a: 1 }, version: 1 });
  });

  it('destroys the data record for good; undelete cannot bring it back', async () => {
    const { kv, storage } = makeKv();
    await kv.writeData('k', { a: 'v1' }, undefined);
    await kv.writeData('k', { a: 'v2' }, undefined);
    const before = (await allKeys(storage)).filter((k) => k.startsWith('versions/'));
    await kv.destroyVersions('k', [1]);
    const after = (await allKeys(storage)).filter((k) => k.startsWith('versions/'));
    expect(before).toHaveLength(2);
    expect(after).toHaveLength(1);
    await kv.undeleteVersions('k', [1]);
    expect(await kv.readData('k', 1)).toMatchObject({ gone: true, metadata: { destroyed: true, deletion_time: '' } });
    expect(await kv.readData('k', 2)).toMatchObject({ gone: false, data: { a: 'v2' } });
  });

  it("rejects an empty version list with Vault's messages", async () => {
    const { kv } = makeKv();
    await expect(kv.deleteVersions('k', [])).rejects.toThrow('No version number provided');
    await expect(kv.undeleteVersions('k', [])).rejects.toThrow('No version number provided');
    await expect(kv.destroyVersions('k', [])).rejects.toThrow('no version number provided');
  });

  it('schedules deletion with the smaller delete_version_after of engine and secret', async () => {
    const { kv, clock } = makeKv();
    await kv.setConfig({ deleteVersionAfter: 3600 });
    await kv.writeMetadata('k', { deleteVersionAfter: 60 });
    await kv.writeData('k', { a: 1 }, undefined);
    const r = await kv.readData('k');
    expect(r).toMatchObject({ gone: false });
    expect(r!.metadata.deletion_time.slice(0, 19)).toBe('2024-01-02T03:05:05');
    clock.ms += 61_000;
    expect(await kv.readData('k')).toMatchObject({ gone: true });
    expect(await kv.readLatest('k')).toBeNull();
  });

  it('never schedules deletion when the engine disables delete_version_after', async () => {
    const { kv } = makeKv();
    await kv.setConfig({ deleteVersionAfter: -5 });
    await kv.writeMetadata('k', { deleteVersionAfter: 60 });
    expect((await kv.writeData('k', { a: 1 }, undefined)).metadata.deletion_time).toBe('');
    expect(await kv.configView()).toEqual({ cas_required: false, delete_version_after: '-1s', max_versions: 0 });
  });
});

describe('KvBackend versions and pruning', () => {
  it('keeps 10 versions by default and removes the records of older ones', async () => {
    const { kv, storage } = makeKv();
    for (let i = 1; i <= 13; i++) await kv.writeData('k', { i }, undefined);
    const m = await kv.readMetadata('k');
    expect(m).toMatchObject({ current_version: 13, oldest_version: 4 });
    expect(Object.keys(m!.versions as object)).toEqual(['4', '5', '6', '7', '8', '9', '10', '11', '12', '13']);
    expect((await allKeys(storage)).filter((k) => k.startsWith('versions/'))).toHaveLength(10);
    expect(await kv.readData('k', 3)).toBeNull();
  });

  it('uses the larger of the engine and secret max_versions, as Vault does', async () => {
    const { kv } = makeKv();
    await kv.setConfig({ maxVersions: 2 });
    await kv.writeMetadata('k', { maxVersions: 4 });
    for (let i = 1; i <= 6; i++) await kv.writeData('k', { i }, undefined);
    expect(Object.keys((await kv.readMetadata('k'))!.versions as object)).toEqual(['3', '4', '5', '6']);
  });

  it('prunes records of destroyed and deleted versions too when max_versions shrinks', async () => {
    const { kv, storage } = makeKv();
    await kv.writeMetadata('k', { maxVersions: 20 });
    for (let i = 1; i <= 8; i++) await kv.writeData('k', { i }, undefined);
    await kv.destroyVersions('k', [3]);
    await kv.deleteVersions('k', [5]);
    await kv.writeMetadata('k', { maxVersions: 2 });
    await kv.writeData('k', { i: 9 }, undefined);
    expect(Object.keys((await kv.readMetadata('k'))!.versions as object)).toEqual(['8', '9']);
    expect((await allKeys(storage)).filter((k) => k.startsWith('versions/'))).toHaveLength(2);
  });

  it('removes every record on metadata delete, and a new write starts at version 1', async () => {
    const { kv, storage } = makeKv();
    for (let i = 1; i <= 3; i++) await kv.writeData('a/b', { i }, undefined);
    await kv.deleteMetadata('a/b');
    const left = (await allKeys(storage)).filter((k) => k !== 'namekey' && k !== 'config');
    expect(left).toEqual([]);
    expect(await kv.readMetadata('a/b')).toBeNull();
    expect((await kv.writeData('a/b', { i: 1 }, undefined)).metadata.version).toBe(1);
  });
});

describe('KvBackend metadata and listing', () => {
  it('creates metadata without a version, and reports the secret as existing', async () => {
    const { kv } = makeKv();
    expect(await kv.exists('k')).toBe(false);
    await kv.writeMetadata('k', { customMetadata: { owner: 'ops' } });
    expect(await kv.exists('k')).toBe(true);
    expect(await kv.readMetadata('k')).toMatchObject({
      current_version: 0,
      custom_metadata: { owner: 'ops' },
      versions: {},
    });
    expect(await kv.readData('k')).toBeNull();
    expect(await kv.metadataOf('k')).toEqual({ currentVersion: 0, customMetadata: { owner: 'ops' } });
  });

  it('replaces custom metadata on write and merges it on patch', async () => {
    const { kv } = makeKv();
    await kv.writeMetadata('k', { customMetadata: { a: '1', b: '2' } });
    await kv.writeMetadata('k', { customMetadata: { c: '3' } });
    expect((await kv.readMetadata('k'))!.custom_metadata).toEqual({ c: '3' });
    await kv.patchMetadata('k', { customMetadata: { c: null, d: '4' } });
    expect((await kv.readMetadata('k'))!.custom_metadata).toEqual({ d: '4' });
    expect(await kv.patchMetadata('missing', { maxVersions: 1 })).toBeNull();
  });

  it('warns when cas_required is set false while the engine requires it', async () => {
    const { kv } = makeKv();
    await kv.setConfig({ casRequired: true });
    expect(await kv.writeMetadata('k', { casRequired: false })).toEqual([
      '"cas_required" set to false, but is mandated by backend config. This value will be ignored.',
    ]);
  });

  it('lists secrets and folders like Vault, sorted', async () => {
    const { kv } = makeKv();
    for (const p of ['b', 'a/x', 'a', 'a/y/z', 'c/d']) await kv.writeData(p, { v: 1 }, undefined);
    expect(await kv.list('')).toEqual(['a', 'a/', 'b', 'c/']);
    expect(await kv.list('a')).toEqual(['x', 'y/']);
    expect(await kv.list('nothing')).toEqual([]);
  });

  it('keeps secret names and values out of storage keys and records in clear', async () => {
    const { kv, storage } = makeKv();
    await kv.writeData('payroll/ceo-salary', { amount: 'SECRET-AMOUNT-123' }, undefined);
    for (const key of await allKeys(storage)) {
      expect(key).not.toMatch(/payroll|ceo|salary/);
    }
    expect(await kv.list('')).toEqual(['payroll/']);
  });
});

describe('KvBackend for secret sync', () => {
  it('readLatest and metadataOf answer null for missing or invalid paths', async () => {
    const { kv } = makeKv();
    expect(await kv.readLatest('missing')).toBeNull();
    expect(await kv.readLatest('a//b')).toBeNull();
    expect(await kv.metadataOf('missing')).toBeNull();
    expect(await kv.metadataOf('')).toBeNull();
  });

  it('readLatest answers null when the current version is destroyed', async () => {
    const { kv } = makeKv();
    await kv.writeData('k', { a: 1 }, undefined);
    await kv.writeData('k', { a: 2 }, undefined);
    await kv.destroyVersions('k', [2]);
    expect(await kv.readLatest('k')).toBeNull();
    expect(await kv.metadataOf('k')).toEqual({ currentVersion: 2, customMetadata: {} });
  });
});
