/**
 * File backend (the embedded default). One file per record; a record "a/b/c" lives at
 * <root>/a/b/_c (segments percent-encoded, so no name can escape the root or collide with "." or "..").
 * Writes are crash-safe: temp file in the same directory, fsync, rename over the target, fsync the
 * directory. A lock file (O_EXCL, holding our pid) stops a second daemon from opening the same storage.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { open, mkdir, readdir, readFile, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Backend } from './backend.js';

function encodeSegment(s: string): string {
  return encodeURIComponent(s).replace(/\./g, '%2E').replace(/\*/g, '%2A');
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
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw e;
    }
  }

  async put(key: string, value: Buffer): Promise<void> {
    const target = this.file(key);
    const dir = target.slice(0, target.lastIndexOf('/'));
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const tmp = join(dir, `.tmp-${randomBytes(6).toString('hex')}`);
    const fh = await open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(value);
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await rename(tmp, target);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
    const dh = await open(dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  }

  async delete(key: string): Promise<void> {
    const target = this.file(key);
    await rm(target, { force: true });
    // Remove now-empty parent folders so lists stay clean (best effort).
    let dir = target.slice(0, target.lastIndexOf('/'));
    const base = join(this.root, 'data');
    while (dir.length > base.length) {
      try {
        await rmdir(dir);
      } catch {
        break;
      }
      dir = dir.slice(0, dir.lastIndexOf('/'));
    }
  }

  async list(prefix: string): Promise<string[]> {
    let entries;
    try {
      entries = await readdir(this.dir(prefix), { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
