/**
 * File backend (the embedded default). One file per record; a record "a/b/c" lives at
 * <root>/data/a/b/_c. Segments are percent-encoded, "." and "_" included, so no name can escape the
 * root, be "." or "..", clash with a temp file (".tmp-*"), or make a folder start with "_" (leaf
 * files always do, folders never: the key "x" and the folder "x/" live side by side).
 * Writes are crash-safe: temp file in the same directory, fsync, rename over the target, fsync the
 * directory. A lock file (O_EXCL, holding our pid) stops a second daemon from opening the same storage.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { open, mkdir, readdir, readFile, rename, rm, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Backend } from './backend.js';

function encodeSegment(s: string): string {
  return encodeURIComponent(s).replace(/[._*!'()~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'));
}

/** Thrown when another process holds the storage lock. */
export class StorageLockedError extends Error {}

/** Crash-safe file-per-record storage. */
export class FileBackend implements Backend {
  private lockPath: string;
  private locked = false;

  constructor(private readonly root: string) {
    this.lockPath = join(root, 'keyhold.lock');
  }

  /** Create the root (0700) and take the lock; throws StorageLockedError when held by a live process. */
  openSync(): void {
    mkdirSync(this.root, { recursive: true, mode: 0o700 });
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(this.lockPath, 'wx', 0o600);
        writeSync(fd, String(process.pid));
        closeSync(fd);
        this.locked = true;
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const pid = Number(readFileSync(this.lockPath, 'utf8').trim());
        if (pid && pid !== process.pid && isAlive(pid)) {
          throw new StorageLockedError(`storage at ${this.root} is in use by another keyhold daemon (pid ${pid}); stop it first or choose another storage path`);
        }
        unlinkSync(this.lockPath); // stale lock from a crashed daemon
      }
    }
    throw new StorageLockedError(`could not lock storage at ${this.root}`);
  }

  private file(key: string): string {
    const parts = key.split('/');
    const leaf = parts.pop()!;
    return join(this.root, 'data', ...parts.map(encodeSegment), '_' + encodeSegment(leaf));
  }

  private dir(prefix: string): string {
    const parts = prefix.split('/').filter((p) => p !== '');
    return join(this.root, 'data', ...parts.map(encodeSegment));
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.file(key));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR' || (e as NodeJS.ErrnoException).code === 'ENAMETOOLONG') return null;
      throw e;
    }
  }

  async put(key: string, value: Buffer): Promise<void> {
    const target = this.file(key);
    const dir = dirname(target);
    // A concurrent delete may remove a folder it just emptied between our mkdir and open: retry.
    for (let attempt = 0; ; attempt++) {
      try {
        await this.ensureDir(dir);
        await this.writeAtomic(dir, target, value);
        return;
      } catch (e) {
        this.knownDirs.delete(dir);
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw e;
      }
    }
  }

  /**
   * Folders known to exist (created or seen by a put here, not removed since): a put into one skips
   * the mkdir call. Bounded; a folder removed behind our back makes the put fail with ENOENT, which
   * forgets it and retries.
   */
  private readonly knownDirs = new Set<string>();

  /** Create `dir` (0700) and make its new entries durable by fsyncing each parent that gained one. */
  private async ensureDir(dir: string): Promise<void> {
    if (this.knownDirs.has(dir)) return;
    await this.makeDir(dir);
    if (this.knownDirs.size >= 10_000) this.knownDirs.clear();
    this.knownDirs.add(dir);
  }

  private async makeDir(dir: string): Promise<void> {
    const first = await mkdir(dir, { recursive: true, mode: 0o700 });
    if (first === undefined) return;
    // Folders first..dir are new: each one's parent gained an entry.
    const chain: string[] = [];
    for (let d = dir; ; d = dirname(d)) {
      chain.push(d);
      if (d === first || d.length <= first.length) break;
    }
    for (const d of chain) await this.syncDir(dirname(d));
  }

  /** Directory fsyncs running, and the one queued behind each (see syncDir). */
  private readonly dirSyncs = new Map<string, { current: Promise<void>; next: Promise<void> | null }>();

  /**
   * fsync `dir` so entries renamed or removed in it before this call are durable. Group commit:
   * concurrent writers into one folder (e.g. many sync association records) share directory fsyncs.
   * A caller arriving while one runs cannot rely on it (it may have started before the caller's
   * rename), so it waits for the next one, which starts when the running one ends and serves every
   * caller that arrived meanwhile.
   */
  private syncDir(dir: string): Promise<void> {
    const st = this.dirSyncs.get(dir);
    const start = (entry: { current: Promise<void>; next: Promise<void> | null }): Promise<void> => {
      const p = fsyncDir(dir);
      entry.current = p;
      const done = () => {
        if (this.dirSyncs.get(dir) === entry && entry.current === p && !entry.next) this.dirSyncs.delete(dir);
      };
      p.then(done, done);
      return p;
    };
    if (!st) {
      const entry = { current: Promise.resolve(), next: null as Promise<void> | null };
      this.dirSyncs.set(dir, entry);
      return start(entry);
    }
    st.next ??= st.current.then(
      () => undefined,
      () => undefined,
    ).then(() => {
      st.next = null;
      return start(st);
    });
    return st.next;
  }

  /** temp file in the same folder, fsync, rename over the target, fsync the folder. */
  private async writeAtomic(dir: string, target: string, value: Buffer): Promise<void> {
    const tmp = join(dir, `.tmp-${randomBytes(6).toString('hex')}`);
    const fh = await open(tmp, 'wx', 0o600);
    try {
      await fh.writeFile(value);
      await fh.sync();
    } catch (e) {
      await fh.close();
      await rm(tmp, { force: true });
      throw e;
    }
    await fh.close();
    try {
      await rename(tmp, target);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
    await this.syncDir(dir);
  }

  async delete(key: string): Promise<void> {
    const target = this.file(key);
    try {
      await unlink(target);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENAMETOOLONG') return;
      throw e;
    }
    let dir = dirname(target);
    await this.syncDir(dir);
    // Remove now-empty parent folders so lists stay clean (best effort).
    const base = join(this.root, 'data');
    while (dir.length > base.length) {
      try {
        await rmdir(dir);
      } catch {
        break;
      }
      this.knownDirs.delete(dir);
      dir = dirname(dir);
    }
  }

  async list(prefix: string): Promise<string[]> {
    let entries;
    try {
      entries = await readdir(this.dir(prefix), { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR' || (e as NodeJS.ErrnoException).code === 'ENAMETOOLONG') return [];
      throw e;
    }
    const out: string[] = [];
    for (const ent of entries) {
      if (ent.isDirectory()) out.push(decodeURIComponent(ent.name) + '/');
      else if (ent.name.startsWith('_')) out.push(decodeURIComponent(ent.name.slice(1)));
    }
    return out.sort();
  }

  async close(): Promise<void> {
    if (this.locked) {
      try {
        unlinkSync(this.lockPath);
      } catch {
        /* already gone */
      }
      this.locked = false;
    }
  }

  describe(): string {
    return `file:${this.root}`;
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
