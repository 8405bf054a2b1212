import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  existsSync,
  mkdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { FileBackend, StorageLockedError } from '../../../src/storage/file.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import type { Backend } from '../../../src/storage/backend.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'keyhold-file-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

function fileBackend(): FileBackend {
  const b = new FileBackend(tmp());
  b.openSync();
  return b;
}

// The contract every backend keeps (file and in-memory alike).
for (const [name, make] of [
  ['file', fileBackend],
  ['inmem', () => new InmemBackend()],
] as Array<[string, () => Backend]>) {
  describe(`${name} backend contract`, () => {
    it('gets, puts, overwrites and deletes', async () => {
      const b = make();
      expect(await b.get('a/b')).toBeNull();
      await b.put('a/b', Buffer.from('1'));
      await b.put('a/b', Buffer.from('2'));
      expect((await b.get('a/b'))!.toString()).toBe('2');
      await b.delete('a/b');
      await b.delete('a/b');
      expect(await b.get('a/b')).toBeNull();
      await b.close();
    });

    it('lists immediate children, folders with a trailing slash, sorted', async () => {
      const b = make();
      for (const k of ['p/z', 'p/a', 'p/f/x', 'p/f/y/z', 'q/1']) await b.put(k, Buffer.from(k));
      expect(await b.list('p/')).toEqual(['a', 'f/', 'z']);
      expect(await b.list('p/f/')).toEqual(['x', 'y/']);
      expect(await b.list('')).toEqual(['p/', 'q/']);
      expect(await b.list('none/')).toEqual([]);
      await b.close();
    });

    it('keeps a key and a folder of the same name apart, and odd names intact', async () => {
      const b = make();
      const names = ['x', '_x', '.', '..', '.tmp-abc', 'a b', 'ü', '%2F', 'c*', "it's", '~'];
      for (const n of names) {
        await b.put(`k/${n}`, Buffer.from('leaf ' + n));
        await b.put(`k/${n}/child`, Buffer.from('child ' + n));
      }
      for (const n of names) {
        expect((await b.get(`k/${n}`))!.toString()).toBe('leaf ' + n);
        expect((await b.get(`k/${n}/child`))!.toString()).toBe('child ' + n);
      }
      const listed = await b.list('k/');
      for (const n of names) {
        expect(listed).toContain(n);
        expect(listed).toContain(n + '/');
      }
      expect(listed.length).toBe(names.length * 2);
      await b.close();
    });

    it('drops empty folders after deletes', async () => {
      const b = make();
      await b.put('d/e/f', Buffer.from('1'));
      await b.delete('d/e/f');
      expect(await b.list('d/')).toEqual([]);
      expect(await b.list('')).toEqual([]);
      await b.close();
    });

    it('survives concurrent puts and deletes in one folder', async () => {
      const b = make();
      const ops: Promise<void>[] = [];
      for (let i = 0; i < 50; i++) {
        ops.push(b.put(`c/${i}`, Buffer.from(String(i))));
        ops.push(b.delete(`c/${i - 1}`));
      }
      await Promise.all(ops);
      await b.put('c/final', Buffer.from('f'));
      expect((await b.get('c/final'))!.toString()).toBe('f');
      await b.close();
    });

    it('copies values so callers cannot alias stored bytes', async () => {
      const b = make();
      const v = Buffer.from('abc');
      await b.put('v', v);
      v[0] = 0x7a;
      const got = (await b.get('v'))!;
      expect(got.toString()).toBe('abc');
      got[0] = 0x7a;
      expect((await b.get('v'))!.toString()).toBe('abc');
      await b.close();
    });
  });
}

describe('file backend on disk', () => {
  it('creates its files 0600 and folders 0700, and keeps no plaintext key names outside the log', async () => {
    const root = tmp();
    const b = new FileBackend(root);
    b.openSync();
    await b.put('a/b/c', Buffer.from('x'));
    for (const f of walk(root)) expect(statSync(f).mode & 0o777, f).toBe(0o600);
    expect(statSync(join(root, 'log')).mode & 0o777).toBe(0o700);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(root, 'log'))).toEqual(['0000000000000001.seg']);
    await b.close();
  });

  it('removes a compaction temp file a crash left behind', async () => {
    const root = tmp();
    const a = new FileBackend(root);
    a.openSync();
    await a.put('k/v', Buffer.from('old'));
    await a.close();
    writeFileSync(join(root, 'log', '0000000000000001.cmp.tmp'), 'half-writ');
    const b = new FileBackend(root);
    b.openSync();
    expect(await b.list('k/')).toEqual(['v']);
    expect((await b.get('k/v'))!.toString()).toBe('old');
    expect(readdirSync(join(root, 'log')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    await b.close();
  });

  it('imports storage of the file-per-record layout on first open, then removes it', async () => {
    const root = tmp();
    // The earlier layout: <root>/data/<percent-encoded folders>/_<percent-encoded leaf>.
    mkdirSync(join(root, 'data', 'sys', 'token', 'id'), { recursive: true });
    mkdirSync(join(root, 'data', 'logical', 'a%2Eb'), { recursive: true });
    writeFileSync(join(root, 'data', 'sys', 'token', 'id', '_h1'), 'token-entry');
    writeFileSync(join(root, 'data', 'logical', 'a%2Eb', '_x%20y'), 'value');
    writeFileSync(join(root, 'data', 'logical', 'a%2Eb', '.tmp-0123'), 'half');
    mkdirSync(join(root, 'data', 'core'));
    writeFileSync(join(root, 'data', 'core', '_seal'), 'seal');
    writeFileSync(join(root, 'data', '_salt'), 'salt');
    const b = new FileBackend(root);
    b.openSync();
    expect(existsSync(join(root, 'data'))).toBe(false);
    expect((await b.get('sys/token/id/h1'))!.toString()).toBe('token-entry');
    expect((await b.get('logical/a.b/x y'))!.toString()).toBe('value');
    expect((await b.get('core/seal'))!.toString()).toBe('seal');
    expect(await b.list('logical/a.b/')).toEqual(['x y']);
    expect(await b.list('')).toEqual(['core/', 'logical/', 'salt', 'sys/']);
    await b.close();
    const c = new FileBackend(root);
    c.openSync();
    expect((await c.get('sys/token/id/h1'))!.toString()).toBe('token-entry');
    await c.close();
  });

  it('refuses a second opener with a message naming the pid, and releases the lock on close', async () => {
    const root = tmp();
    const a = new FileBackend(root);
    a.openSync();
    const lock = join(root, 'keyhold.lock');
    expect(readFileSync(lock, 'utf8')).toBe(String(process.pid));
    // Pretend another live process (our parent) holds it.
    writeFileSync(lock, String(process.ppid));
    const b = new FileBackend(root);
    expect(() => b.openSync()).toThrow(StorageLockedError);
    expect(() => b.openSync()).toThrow(new RegExp(`in use by another keyhold daemon \\(pid ${process.ppid}\\)`));
    writeFileSync(lock, String(process.pid));
    await a.close();
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over a stale lock left by a dead process', async () => {
    const root = tmp();
    mkdirSync(root, { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    writeFileSync(join(root, 'keyhold.lock'), dead);
    const b = new FileBackend(root);
    b.openSync();
    expect(readFileSync(join(root, 'keyhold.lock'), 'utf8')).toBe(String(process.pid));
    await b.close();
  });
});
