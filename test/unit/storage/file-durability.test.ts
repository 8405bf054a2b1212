// Checks the order of file-system calls a put makes: temp file, fsync, rename, fsync of the folder
// (and of each parent that gained a new folder), so an acknowledged write survives a crash.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

const calls: string[] = [];
let failRename = false;

vi.mock('node:fs/promises', async (importOriginal) => {
  const orig = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...orig,
    open: async (path: string, flags?: string, mode?: number) => {
      const fh = await orig.open(path, flags, mode);
      const name = String(path);
      return new Proxy(fh, {
        get(target, prop, recv) {
          if (prop === 'sync')
            return async () => {
              calls.push(`fsync ${name}`);
              return target.sync();
            };
          if (prop === 'writeFile')
            return async (data: Buffer) => {
              calls.push(`write ${name}`);
              return target.writeFile(data);
            };
          const v = Reflect.get(target, prop, recv);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
    },
    rename: async (from: string, to: string) => {
      calls.push(`rename ${from} -> ${to}`);
      if (failRename) throw Object.assign(new Error('EIO: simulated'), { code: 'EIO' });
      return orig.rename(from, to);
    },
  };
});

const { FileBackend } = await import('../../../src/storage/file.js');
const root = mkdtempSync(join(tmpdir(), 'keyhold-dur-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('file backend durability', () => {
  it('writes a temp file, fsyncs it, renames it over the target, then fsyncs the folder', async () => {
    const b = new FileBackend(root);
    b.openSync();
    await b.put('m/k', Buffer.from('v1'));
    calls.length = 0;
    await b.put('m/k', Buffer.from('v2'));
    const dir = join(root, 'data', 'm');
    expect(calls.length).toBe(4);
    expect(calls[0]).toMatch(new RegExp(`^write ${dir}/\\.tmp-[0-9a-f]+$`));
    const tmpFile = calls[0]!.slice('write '.length);
    expect(calls[1]).toBe(`fsync ${tmpFile}`);
    expect(calls[2]).toBe(`rename ${tmpFile} -> ${join(dir, '_k')}`);
    expect(calls[3]).toBe(`fsync ${dir}`);
    await b.close();
  });

  it('fsyncs every parent that gained a new folder', async () => {
    const b = new FileBackend(root);
    b.openSync();
    calls.length = 0;
    await b.put('new1/new2/k', Buffer.from('v'));
    const data = join(root, 'data');
    expect(calls).toContain(`fsync ${data}`);
    expect(calls).toContain(`fsync ${join(data, 'new1')}`);
    expect(calls.at(-1)).toBe(`fsync ${join(data, 'new1', 'new2')}`);
    await b.close();
  });

  it('keeps the old value and removes the temp file when the rename fails', async () => {
    const b = new FileBackend(root);
    b.openSync();
    await b.put('r/k', Buffer.from('old'));
    failRename = true;
    await expect(b.put('r/k', Buffer.from('new'))).rejects.toThrow(/EIO/);
    failRename = false;
    expect((await b.get('r/k'))!.toString()).toBe('old');
    expect(await b.list('r/')).toEqual(['k']);
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(join(root, 'data', 'r')).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    await b.close();
  });

  it('fsyncs the folder after a delete', async () => {
    const b = new FileBackend(root);
    b.openSync();
    await b.put('del/a', Buffer.from('1'));
    await b.put('del/b', Buffer.from('1'));
    calls.length = 0;
    await b.delete('del/a');
    expect(calls).toEqual([`fsync ${join(root, 'data', 'del')}`]);
    await b.close();
  });

  it('concurrent puts into one folder share folder fsyncs, each started after the rename it covers (group commit)', async () => {
    const b = new FileBackend(root);
    b.openSync();
    await b.put('gc/first', Buffer.from('0'));
    calls.length = 0;
    await Promise.all(Array.from({ length: 20 }, (_, i) => b.put(`gc/k${i}`, Buffer.from(String(i)))));
    const dir = join(root, 'data', 'gc');
    const renames = calls.flatMap((c, i) => (c.startsWith('rename ') ? [i] : []));
    const dirSyncs = calls.flatMap((c, i) => (c === `fsync ${dir}` ? [i] : []));
    expect(renames).toHaveLength(20);
    for (const r of renames) expect(dirSyncs.some((f) => f > r), `rename at ${r} has a folder fsync after it`).toBe(true);
    expect(dirSyncs.length).toBeLessThan(20);
    for (let i = 0; i < 20; i++) expect((await b.get(`gc/k${i}`))!.toString()).toBe(String(i));
    await b.close();
  });

  it('a folder removed by a delete is created again by the next put', async () => {
    const b = new FileBackend(root);
    b.openSync();
    await b.put('gone/a', Buffer.from('1'));
    await b.delete('gone/a');
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(root, 'data', 'gone'))).toBe(false);
    await b.put('gone/b', Buffer.from('2'));
    expect((await b.get('gone/b'))!.toString()).toBe('2');
    await b.close();
  });
});
