// Durability of the log-structured file backend: an acknowledged write survives a kill -9, a torn or
// failed append never damages what came before, concurrent writes share appends, and compaction
// (including a crash in the middle of it) never loses or resurrects a record.
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { appendFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

/** Make the next `write` to a segment store half its bytes and then fail like a full disk. */
let failNextWrite = false;
vi.mock('node:fs', async (importOriginal) => {
  const orig = await importOriginal<typeof import('node:fs')>();
  return {
    ...orig,
    write: (
      fd: number,
      buf: Buffer,
      off: number,
      len: number,
      pos: number | null,
      cb: (e: NodeJS.ErrnoException | null, n: number) => void,
    ) => {
      if (!failNextWrite) return orig.write(fd, buf, off, len, pos, cb);
      failNextWrite = false;
      orig.writeSync(fd, buf, off, Math.floor(len / 2));
      const e = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      setImmediate(() => cb(e, 0));
    },
  };
});

const { FileBackend } = await import('../../../src/storage/file.js');
const { readFrames } = await import('../../../src/storage/file-format.js');
const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'keyhold-dur-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function open(root: string, opts = {}) {
  const b = new FileBackend(root, opts);
  b.openSync();
  return b;
}

function logFiles(root: string): string[] {
  return readdirSync(join(root, 'log')).sort();
}

function logBytes(root: string): number {
  return logFiles(root).reduce((n, f) => n + statSync(join(root, 'log', f)).size, 0);
}

/** Poll (bounded) until `cond` holds. */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('file backend durability', () => {
  it('every write acknowledged before a kill -9 reads back after reopening', async () => {
    const root = tmp();
    const dist = resolve(import.meta.dirname, '..', '..', '..', 'dist', 'storage', 'file.js');
    expect(existsSync(dist), 'dist/ is built (npm test builds it first)').toBe(true);
    // A writer process: 8 writers in parallel, one line per acknowledged write, until killed.
    const script = `
      const { FileBackend } = await import(${JSON.stringify(dist)});
      const b = new FileBackend(${JSON.stringify(root)});
      b.openSync();
      let i = 0;
      await Promise.all(Array.from({ length: 8 }, async () => {
        for (;;) { const n = i++; await b.put('k/' + n, Buffer.from('value-' + n)); process.stdout.write(n + '\\n'); }
      }));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acked: number[] = [];
    let buf = '';
    child.stdout.on('data', (c: Buffer) => {
      buf += c.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) acked.push(Number(l));
    });
    await until(() => acked.length >= 400, '400 acknowledged writes');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const b = open(root);
    for (const n of acked) expect((await b.get(`k/${n}`))?.toString(), `k/${n}`).toBe(`value-${n}`);
    const listed = new Set(await b.list('k/'));
    for (const n of acked) expect(listed.has(String(n))).toBe(true);
    await b.close();
  });

  it('a torn frame at the end of a segment is ignored; the writes before and after it survive', async () => {
    const root = tmp();
    const a = open(root);
    for (let i = 0; i < 10; i++) await a.put(`t/${i}`, Buffer.from(`v${i}`));
    await a.close();
    const seg = join(root, 'log', logFiles(root)[0]!);
    const whole = readFileSync(seg);
    // A crash mid-append: the start of a frame (magic, length) and part of its payload.
    appendFileSync(seg, Buffer.concat([whole.subarray(0, 8), Buffer.from('partial payload')]));
    const b = open(root);
    for (let i = 0; i < 10; i++) expect((await b.get(`t/${i}`))!.toString()).toBe(`v${i}`);
    await b.put('t/after', Buffer.from('later'));
    await b.close();
    const c = open(root);
    expect((await c.get('t/after'))!.toString()).toBe('later');
    expect(await c.list('t/')).toHaveLength(11);
    await c.close();
  });

  it('a failed append is cut back off the segment: the write fails cleanly and the next one lands whole', async () => {
    const root = tmp();
    const a = open(root);
    await a.put('f/k', Buffer.from('old'));
    const seg = join(root, 'log', logFiles(root)[0]!);
    const before = statSync(seg).size;
    failNextWrite = true;
    await expect(a.put('f/k', Buffer.from('new-and-longer'))).rejects.toThrow(/ENOSPC/);
    expect(statSync(seg).size).toBe(before);
    expect((await a.get('f/k'))!.toString()).toBe('old');
    await a.put('f/k2', Buffer.from('next'));
    await a.close();
    const frames = readFrames(readFileSync(seg));
    expect(frames.at(-1)!.end).toBe(statSync(seg).size);
    const b = open(root);
    expect((await b.get('f/k'))!.toString()).toBe('old');
    expect((await b.get('f/k2'))!.toString()).toBe('next');
    await b.close();
  });

  it('concurrent writes share appends (group commit), in the order they were made', async () => {
    const root = tmp();
    const a = open(root);
    await Promise.all(Array.from({ length: 50 }, (_, i) => a.put(`g/${i % 10}`, Buffer.from(String(i)))));
    for (let k = 0; k < 10; k++) expect((await a.get(`g/${k}`))!.toString()).toBe(String(40 + k));
    await a.close();
    const frames = readFrames(readFileSync(join(root, 'log', logFiles(root)[0]!)));
    expect(frames.reduce((n, f) => n + f.ops.length, 0)).toBe(50);
    expect(frames.length).toBeLessThan(50);
    const b = open(root);
    for (let k = 0; k < 10; k++) expect((await b.get(`g/${k}`))!.toString()).toBe(String(40 + k));
    await b.close();
  });

  it('compaction keeps live values, drops dead bytes, and deleted keys stay deleted after reopening', async () => {
    const root = tmp();
    const opts = { segmentLimit: 4096, compactMin: 16 * 1024 };
    const a = open(root, opts);
    const big = (i: number, round: number) => Buffer.from(`${round}:`.padEnd(200, String(i % 10)));
    for (let round = 0; round < 12; round++) for (let i = 0; i < 20; i++) await a.put(`c/${i}`, big(i, round));
    for (let i = 0; i < 5; i++) await a.delete(`c/${i}`);
    // Writes go on while a compaction runs; the newest value must win.
    await until(() => logFiles(root).some((f) => f.endsWith('.cmp')), 'a compacted file');
    await a.put('c/19', Buffer.from('newest'));
    await a.close();
    expect(logBytes(root)).toBeLessThan(12 * 20 * 200);
    const b = open(root, opts);
    for (let i = 0; i < 5; i++) expect(await b.get(`c/${i}`)).toBeNull();
    for (let i = 5; i < 19; i++) expect((await b.get(`c/${i}`))!.toString()).toBe(big(i, 11).toString());
    expect((await b.get('c/19'))!.toString()).toBe('newest');
    expect((await b.list('c/')).length).toBe(15);
    await b.close();
  });

  it('restarts with a few writes each do not pile up segment files (each holds a descriptor)', async () => {
    const root = tmp();
    for (let i = 0; i < 40; i++) {
      const b = open(root);
      await b.put(`s/${i}`, Buffer.from(String(i)));
      await b.close();
    }
    expect(logFiles(root).length).toBeLessThanOrEqual(18);
    const b = open(root);
    for (let i = 0; i < 40; i++) expect((await b.get(`s/${i}`))!.toString()).toBe(String(i));
    await b.close();
  });

  it('a crash between the compacted file and the removal of its inputs neither loses nor resurrects a record', async () => {
    const root = tmp();
    const opts = { segmentLimit: 2048, compactMin: 1 << 30 };
    const a = open(root, opts);
    for (let i = 0; i < 30; i++) await a.put(`r/${i}`, Buffer.from(`first-${i}`.padEnd(150, '.')));
    await a.delete('r/0');
    for (let i = 1; i < 30; i += 2) await a.put(`r/${i}`, Buffer.from(`second-${i}`));
    await a.close();
    const saved = join(tmp(), 'segments');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(saved);
    for (const f of logFiles(root)) copyFileSync(join(root, 'log', f), join(saved, f));
    // Reopen with a low threshold: the next write triggers a compaction of every sealed segment.
    const b = open(root, { segmentLimit: 2048, compactMin: 1 });
    await b.put('r/trigger', Buffer.from('x'));
    await until(() => logFiles(root).some((f) => f.endsWith('.cmp')), 'a compacted file');
    await b.close();
    const cmp = logFiles(root).find((f) => f.endsWith('.cmp'))!;
    // Put the oldest input back (it holds r/0's value, not its delete), as if the crash came before
    // its removal: replaying it would bring r/0 back unless the compacted file rules it out.
    const oldest = readdirSync(saved).sort()[0]!;
    expect(
      readFrames(readFileSync(join(saved, oldest))).some((f) => f.ops.some((o) => o.key === 'r/0' && !o.del)),
    ).toBe(true);
    expect(Number(oldest.slice(0, 16))).toBeLessThan(Number(cmp.slice(0, 16)));
    writeFileSync(join(root, 'log', oldest), readFileSync(join(saved, oldest)));
    const c = open(root);
    expect(await c.get('r/0')).toBeNull();
    for (let i = 1; i < 30; i++)
      expect((await c.get(`r/${i}`))!.toString()).toBe(i % 2 ? `second-${i}` : `first-${i}`.padEnd(150, '.'));
    expect((await c.get('r/trigger'))!.toString()).toBe('x');
    expect(
      logFiles(root).filter((f) => f.endsWith('.seg') && Number(f.slice(0, 16)) <= Number(cmp.slice(0, 16))),
    ).toEqual([]);
    await c.close();
  });
});
