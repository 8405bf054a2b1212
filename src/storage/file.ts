/**
 * File backend (the embedded default): a log-structured store (the Bitcask design) under <root>/log/.
 *
 * - Every put and delete is appended to the active segment (`<n>.seg`, opened O_DSYNC) and resolves
 *   once the append is on disk. Writes that arrive while an append runs go out together in the next
 *   one (group commit): a burst of N concurrent writes costs about one disk flush. Creating a file per
 *   record, as this backend did first, cost a file creation and two fsyncs per write.
 * - An in-memory index maps each key to where its value lies (segment, offset, length); a folder
 *   tree answers lists; a bounded cache keeps recent values. This process is the only writer (the
 *   lock file), so the index and cache are always current.
 * - An append is a frame `KHJ1 | u32 length | first 16 bytes of SHA-256(payload) | payload`, the
 *   payload a run of ops (put: key and value; delete: key); the format is file-format.ts. Opening reads every segment in order and
 *   rebuilds the index; a torn frame at the end (a crash mid-append, never acknowledged) fails its
 *   hash and ends that segment.
 * - Segments roll over at SEGMENT_LIMIT. When dead bytes (overwritten or deleted values) pass both
 *   COMPACT_MIN and the live bytes, compaction writes the live values of every sealed segment into one
 *   file (temp file, fsync, rename to `<n>.cmp`, n = the newest sealed segment) and removes the
 *   inputs. On open, the newest `.cmp` replaces every segment numbered up to its own number, so a
 *   crash at any step leaves either the old segments or the compacted file in charge, never a mix.
 * - Storage written by the earlier file-per-record layout (<root>/data/a/b/_c) is imported into a
 *   segment on first open and then removed.
 * A lock file (O_EXCL, holding our pid) stops a second daemon from opening the same storage.
 */
import {
  closeSync,
  constants as fsc,
  existsSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  read,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  write,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Backend } from './backend.js';
import { Lru } from './lru.js';
import { FRAME_HEAD, encodeOp, frameOf, logFilesInOrder, readFrames, type Op } from './file-format.js';
import { readFileFormat, upgradeFileFormat } from './format-version.js';

/** Thrown when another process holds the storage lock. */
export class StorageLockedError extends Error {}

/** Tuning of a FileBackend (tests use small limits to exercise roll-over and compaction). */
export interface FileBackendOptions {
  /** Size at which the active segment is sealed and a new one started (default 64 MiB). */
  segmentLimit?: number;
  /** Dead bytes below which compaction never runs (default 32 MiB). */
  compactMin?: number;
  /** Bytes of recent values kept in memory (default 32 MiB; 0 turns the cache off). */
  cacheBytes?: number;
}

/** Values above this size are not cached (rare, and they would push many small ones out). */
const CACHE_MAX_VALUE = 256 * 1024;
/** Ops per frame when compaction writes a file. */
const COMPACT_BATCH = 1000;
/** Files (each holds a descriptor) above which compaction merges the sealed ones whatever their dead bytes. */
const MAX_FILES = 16;

/** An open segment or compacted file. */
interface SegFile {
  name: string;
  no: number;
  fd: number;
  size: number;
  /** Reads in flight; a removed file's descriptor closes when they end. */
  readers: number;
  removed: boolean;
}

/** Where a value lies. */
interface Loc {
  file: SegFile;
  off: number;
  len: number;
}

interface Waiter {
  resolve: () => void;
  reject: (e: Error) => void;
}

/** Crash-safe log-structured storage with group commit. */
export class FileBackend implements Backend {
  private lockPath: string;
  private locked = false;
  private readonly logDir: string;
  private readonly segmentLimit: number;
  private readonly compactMin: number;
  private readonly cacheLimit: number;

  /** Every readable file by name, and the active segment (append fd + its read file). */
  private readonly files = new Map<string, SegFile>();
  private active: SegFile | null = null;
  private appendFd = -1;
  private nextNo = 1;

  private readonly index = new Map<string, Loc>();
  /** Direct children of each non-empty folder ("" is the root): leaf names and "sub/" names. */
  private readonly children = new Map<string, Set<string>>();
  /** Bytes of values the index points to, and bytes of all files. */
  private liveBytes = 0;
  private totalBytes = 0;

  private queue: { ops: Op[]; frames: Buffer[]; waiters: Waiter[] } = { ops: [], frames: [], waiters: [] };
  private flushing: Promise<void> | null = null;
  /** Set when a failed append could not be cut back off the segment: writes fail from then on. */
  private broken: Error | null = null;
  private compacting: Promise<void> | null = null;

  private readonly cache: Lru<string, Buffer>;

  constructor(
    private readonly root: string,
    opts: FileBackendOptions = {},
  ) {
    this.lockPath = join(root, 'keyhold.lock');
    this.logDir = join(root, 'log');
    this.segmentLimit = opts.segmentLimit ?? 64 * 1024 * 1024;
    this.compactMin = opts.compactMin ?? 32 * 1024 * 1024;
    this.cacheLimit = opts.cacheBytes ?? 32 * 1024 * 1024;
    this.cache = new Lru<string, Buffer>({
      maxWeight: Math.max(this.cacheLimit, 1),
      weigh: (k, v) => v.length + k.length,
    });
  }

  /**
   * Create the root (0700), take the lock (throws StorageLockedError when held by a live process),
   * import a file-per-record tree, rebuild the index from the segments and start a new segment.
   */
  openSync(): void {
    // The format version first: a store of a newer keyhold is refused before anything is written.
    const format = readFileFormat(this.root);
    mkdirSync(this.root, { recursive: true, mode: 0o700 });
    this.takeLock();
    try {
      upgradeFileFormat(this.root, format);
    } catch (e) {
      unlinkSync(this.lockPath);
      this.locked = false;
      throw e;
    }
    mkdirSync(this.logDir, { recursive: true, mode: 0o700 });
    const names = readdirSync(this.logDir);
    for (const n of names) if (n.endsWith('.tmp')) rmSync(join(this.logDir, n), { force: true });
    const { load, superseded, last } = logFilesInOrder(names);
    // Leftovers of a compaction a crash interrupted after the rename.
    for (const f of superseded) rmSync(join(this.logDir, f.name), { force: true });
    for (const f of load) this.loadFile(f.name, f.no);
    this.nextNo = last + 1;
    this.openSegment();
    this.importLegacy();
    // Every start begins a segment: many restarts with few writes would pile up small files.
    this.maybeCompact();
  }

  private takeLock(): void {
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
          throw new StorageLockedError(
            `storage at ${this.root} is in use by another keyhold daemon (pid ${pid}); stop it first or choose another storage path`,
          );
        }
        unlinkSync(this.lockPath); // stale lock from a crashed daemon
      }
    }
    throw new StorageLockedError(`could not lock storage at ${this.root}`);
  }

  /** Read one file's frames into the index. */
  private loadFile(name: string, no: number): void {
    const buf = readFileSync(join(this.logDir, name));
    const file: SegFile = {
      name,
      no,
      fd: openSync(join(this.logDir, name), 'r'),
      size: buf.length,
      readers: 0,
      removed: false,
    };
    this.files.set(name, file);
    this.totalBytes += buf.length;
    for (const frame of readFrames(buf)) {
      for (const op of frame.ops) {
        if (op.del) this.unindex(op.key);
        else this.indexPut(op.key, { file, off: op.off, len: op.len });
      }
    }
  }

  /** Start segment `nextNo` (O_DSYNC: an append returns once it is on disk) and make its name durable. */
  private openSegment(): void {
    const name = `${String(this.nextNo).padStart(16, '0')}.seg`;
    const path = join(this.logDir, name);
    this.appendFd = openSync(path, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_APPEND | fsc.O_DSYNC, 0o600);
    fsyncPath(this.logDir);
    const file: SegFile = { name, no: this.nextNo++, fd: openSync(path, 'r'), size: 0, readers: 0, removed: false };
    this.files.set(name, file);
    this.active = file;
  }

  /** Seal the active segment and start the next one (between appends only). */
  private rollOver(): void {
    const fd = this.appendFd;
    this.openSegment();
    closeSync(fd);
  }

  /** Import records of the file-per-record layout (<root>/data), then remove that tree. */
  private importLegacy(): void {
    const dataDir = join(this.root, 'data');
    if (!existsSync(dataDir)) return;
    const ops: Op[] = [];
    const walk = (dir: string, prefix: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(dir, e.name), prefix + decodeURIComponent(e.name) + '/');
        else if (e.name.startsWith('_'))
          ops.push({ key: prefix + decodeURIComponent(e.name.slice(1)), value: readFileSync(join(dir, e.name)) });
      }
    };
    walk(dataDir, '');
    for (let i = 0; i < ops.length; i += COMPACT_BATCH) {
      const batch = ops.slice(i, i + COMPACT_BATCH);
      const frame = frameOf(batch.map(encodeOp));
      writeAllSync(this.appendFd, frame);
      this.applyCommitted(batch, this.active!.size);
      this.active!.size += frame.length;
      this.totalBytes += frame.length;
    }
    // Imported records are durable in the segment (O_DSYNC); only now may the old tree go.
    rmSync(dataDir, { recursive: true, force: true });
  }

  private indexPut(key: string, loc: Loc): void {
    const old = this.index.get(key);
    if (old) this.liveBytes -= old.len + key.length;
    else this.addChild(key);
    this.index.set(key, loc);
    this.liveBytes += loc.len + key.length;
  }

  private unindex(key: string): void {
    const old = this.index.get(key);
    if (!old) return;
    this.liveBytes -= old.len + key.length;
    this.index.delete(key);
    this.removeChild(key);
  }

  /** Record `key` in its folder, and each newly non-empty folder in its parent. */
  private addChild(key: string): void {
    let path = key;
    for (;;) {
      const cut = path.endsWith('/') ? path.lastIndexOf('/', path.length - 2) : path.lastIndexOf('/');
      const parent = cut < 0 ? '' : path.slice(0, cut + 1);
      const name = path.slice(parent.length);
      let set = this.children.get(parent);
      const fresh = !set;
      if (!set) this.children.set(parent, (set = new Set()));
      set.add(name);
      if (!fresh || parent === '') return;
      path = parent;
    }
  }

  /** Remove `key` from its folder, and each folder it leaves empty from its parent. */
  private removeChild(key: string): void {
    let path = key;
    for (;;) {
      const cut = path.endsWith('/') ? path.lastIndexOf('/', path.length - 2) : path.lastIndexOf('/');
      const parent = cut < 0 ? '' : path.slice(0, cut + 1);
      const set = this.children.get(parent);
      if (!set) return;
      set.delete(path.slice(parent.length));
      if (set.size || parent === '') return;
      this.children.delete(parent);
      path = parent;
    }
  }

  async get(key: string): Promise<Buffer | null> {
    const loc = this.index.get(key);
    if (!loc) return null;
    const c = this.cache.get(key);
    if (c) return Buffer.from(c);
    const v = await this.readAt(loc);
    // A write committed meanwhile moved the key: do not cache the older value.
    if (this.index.get(key) === loc) this.remember(key, v);
    return Buffer.from(v);
  }

  private readAt(loc: Loc): Promise<Buffer> {
    const f = loc.file;
    f.readers++;
    const buf = Buffer.allocUnsafeSlow(loc.len);
    return new Promise<Buffer>((resolve, reject) => {
      const step = (got: number) =>
        read(f.fd, buf, got, loc.len - got, loc.off + got, (err, n) => {
          if (!err && n > 0 && got + n < loc.len) return step(got + n);
          if (--f.readers === 0 && f.removed) closeQuietly(f.fd);
          if (err) reject(err);
          else if (got + n < loc.len) reject(new Error(`storage segment ${f.name} is shorter than its index says`));
          else resolve(buf);
        });
      step(0);
    });
  }

  async put(key: string, value: Buffer): Promise<void> {
    return this.enqueue({ key, value: Buffer.from(value) });
  }

  async delete(key: string): Promise<void> {
    return this.enqueue({ key, value: null });
  }

  private enqueue(op: Op): Promise<void> {
    if (this.broken) return Promise.reject(this.broken);
    if (this.appendFd < 0) return Promise.reject(new Error('storage is closed'));
    const p = new Promise<void>((resolve, reject) => this.queue.waiters.push({ resolve, reject }));
    this.queue.ops.push(op);
    this.queue.frames.push(encodeOp(op));
    if (!this.flushing) this.flushing = this.flush();
    return p;
  }

  /** Append queued writes, one frame per round, until the queue is empty (the group commit). */
  private async flush(): Promise<void> {
    try {
      for (;;) {
        // Let every write of this turn of the event loop join the append (callers an append just
        // released usually write again within the same turn).
        await new Promise<void>((r) => setImmediate(r));
        if (!this.queue.ops.length) break;
        const batch = this.queue;
        this.queue = { ops: [], frames: [], waiters: [] };
        const frame = frameOf(batch.frames);
        const seg = this.active!;
        try {
          if (this.broken) throw this.broken;
          await appendAll(this.appendFd, frame);
        } catch (e) {
          this.cutBack(seg);
          const err = e instanceof Error ? e : new Error(String(e));
          for (const w of batch.waiters) w.reject(err);
          continue;
        }
        this.applyCommitted(batch.ops, seg.size);
        seg.size += frame.length;
        this.totalBytes += frame.length;
        for (const w of batch.waiters) w.resolve();
        if (seg.size >= this.segmentLimit) {
          try {
            this.rollOver();
          } catch {
            /* no room for a new segment: keep appending to this one; try again after the next append */
          }
        }
        this.maybeCompact();
      }
    } finally {
      this.flushing = null;
    }
  }

  /** After a failed append: cut the segment back to its last whole frame, or stop taking writes. */
  private cutBack(seg: SegFile): void {
    if (this.broken) return;
    try {
      ftruncateSync(this.appendFd, seg.size);
    } catch (e) {
      this.broken = new Error(
        `storage segment could not be restored after a failed write (${(e as Error).message}); restart keyhold`,
      );
    }
  }

  /** Point the index at a frame just made durable at `frameStart` of the active segment. */
  private applyCommitted(ops: Op[], frameStart: number): void {
    const file = this.active!;
    let at = frameStart + FRAME_HEAD;
    for (const op of ops) {
      const klen = Buffer.byteLength(op.key, 'utf8');
      if (op.value) {
        const off = at + 9 + klen;
        this.indexPut(op.key, { file, off, len: op.value.length });
        this.remember(op.key, op.value);
        at = off + op.value.length;
      } else {
        this.unindex(op.key);
        this.forget(op.key);
        at += 5 + klen;
      }
    }
  }

  private remember(key: string, v: Buffer): void {
    if (this.cacheLimit <= 0) return;
    if (v.length > CACHE_MAX_VALUE) this.cache.delete(key);
    else this.cache.set(key, v);
  }

  private forget(key: string): void {
    this.cache.delete(key);
  }

  /** Start a compaction when dead bytes pass both the floor and the live bytes, or files pile up. */
  private maybeCompact(): void {
    if (this.compacting) return;
    const dead = this.totalBytes - this.liveBytes;
    if ((dead < this.compactMin || dead < this.liveBytes) && this.files.size <= MAX_FILES) return;
    this.compacting = this.compact()
      .catch(() => undefined)
      .finally(() => {
        this.compacting = null;
      });
  }

  /**
   * Write the live values of every sealed file into `<n>.cmp` (n = the newest sealed number), then
   * point the index at it and remove the inputs. Writes go on meanwhile: a key written after the
   * snapshot keeps its newer place.
   */
  private async compact(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.active!.size > 0) this.rollOver();
    const inputs = [...this.files.values()].filter((f) => f !== this.active && !f.removed);
    // Nothing sealed since the last compaction: nothing to gain.
    if (!inputs.some((f) => f.name.endsWith('.seg'))) return;
    const inSet = new Set(inputs);
    const no = Math.max(...inputs.map((f) => f.no));
    const entries: Array<[string, Loc]> = [];
    for (const [k, loc] of this.index) if (inSet.has(loc.file)) entries.push([k, loc]);
    const name = `${String(no).padStart(16, '0')}.cmp`;
    const tmpPath = join(this.logDir, `${name}.tmp`);
    const fd = openSync(tmpPath, 'wx', 0o600);
    const moved: Array<[string, Loc, number, number]> = [];
    let size = 0;
    try {
      for (let i = 0; i < entries.length; i += COMPACT_BATCH) {
        const part = entries.slice(i, i + COMPACT_BATCH);
        const values = await Promise.all(part.map(([, loc]) => this.readAt(loc)));
        const frame = frameOf(part.map(([key], j) => encodeOp({ key, value: values[j]! })));
        let at = size + FRAME_HEAD;
        part.forEach(([key, loc], j) => {
          const off = at + 9 + Buffer.byteLength(key, 'utf8');
          moved.push([key, loc, off, values[j]!.length]);
          at = off + values[j]!.length;
        });
        await appendAll(fd, frame);
        size += frame.length;
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmpPath, join(this.logDir, name));
    fsyncPath(this.logDir);
    // The compacted file is in charge from here (open() ignores the inputs); switch the index over.
    const file: SegFile = { name, no, fd: openSync(join(this.logDir, name), 'r'), size, readers: 0, removed: false };
    this.totalBytes += size;
    for (const [key, old, off, len] of moved) if (this.index.get(key) === old) this.index.set(key, { file, off, len });
    this.files.set(name, file);
    for (const f of inputs) {
      // (The newest input is a .seg, so no input shares the compacted file's name.)
      rmSync(join(this.logDir, f.name), { force: true });
      this.files.delete(f.name);
      f.removed = true;
      this.totalBytes -= f.size;
      if (f.readers === 0) closeQuietly(f.fd);
    }
  }

  async list(prefix: string): Promise<string[]> {
    const set = this.children.get(prefix);
    return set ? [...set].sort() : [];
  }

  /** Finish appends and compaction, drop an empty segment, release the lock. */
  async close(): Promise<void> {
    if (this.appendFd >= 0) {
      while (this.flushing || this.compacting) await (this.flushing ?? this.compacting);
      closeSync(this.appendFd);
      this.appendFd = -1;
      if (this.active && this.active.size === 0) rmSync(join(this.logDir, this.active.name), { force: true });
      for (const f of this.files.values()) closeQuietly(f.fd);
      this.files.clear();
      this.index.clear();
      this.children.clear();
      this.cache.clear();
    }
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

/** Write all of `buf` at the end of `fd` (a short write continues where it stopped). */
function appendAll(fd: number, buf: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (off: number) =>
      write(fd, buf, off, buf.length - off, null, (err, n) => {
        if (err) return reject(err);
        if (off + n < buf.length) return step(off + n);
        resolve();
      });
    step(0);
  });
}

function writeAllSync(fd: number, buf: Buffer): void {
  for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* closed already */
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
