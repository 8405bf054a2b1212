/**
 * The `file` audit device: appends JSON lines to a file (or `stdout`, or `discard`), like Vault's.
 * Lines queued while a write is in flight go out together in the next write, so a busy daemon makes
 * one write per batch rather than one per line; each caller still learns whether its line was
 * written. A failed write closes the file so the next line reopens it (the log recovers when the
 * disk does, and a rotated file is picked up); the caller sees the error and fails the request.
 */
import { open, type FileHandle } from 'node:fs/promises';

/** Where an audit device writes lines. */
export interface AuditSink {
  /** Open eagerly (checks the path is writable). */
  open(): Promise<void>;
  /** Append one line (with its newline); rejects when it could not be written. */
  write(line: string): Promise<void>;
  /** Close and reopen (log rotation). */
  reopen(): Promise<void>;
  close(): Promise<void>;
}

interface Pending {
  buf: Buffer;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** Appends to a file opened with O_APPEND (created with `mode`, 0600 by default). */
export class FileSink implements AuditSink {
  private fh: FileHandle | null = null;
  private opening: Promise<FileHandle> | null = null;
  private queue: Pending[] = [];
  private writing = false;

  constructor(
    private readonly path: string,
    /** File mode; null leaves an existing file's mode alone (Vault's mode "0000"). */
    private readonly mode: number | null = 0o600,
  ) {}

  async open(): Promise<void> {
    await this.handle();
  }

  private handle(): Promise<FileHandle> {
    if (this.fh) return Promise.resolve(this.fh);
    this.opening ??= (async () => {
      const fh = await open(this.path, 'a', this.mode ?? 0o600);
      try {
        if (this.mode !== null) await fh.chmod(this.mode);
      } catch (e) {
        await fh.close();
        throw e;
      }
      this.fh = fh;
      return fh;
    })().finally(() => {
      this.opening = null;
    });
    return this.opening;
  }

  write(line: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ buf: Buffer.from(line, 'utf8'), resolve, reject });
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0);
        const buf = batch.length === 1 ? batch[0]!.buf : Buffer.concat(batch.map((p) => p.buf));
        try {
          const fh = await this.handle();
          let off = 0;
          while (off < buf.length) {
            const { bytesWritten } = await fh.write(buf, off, buf.length - off);
            if (bytesWritten <= 0) throw new Error('audit file: short write');
            off += bytesWritten;
          }
          for (const p of batch) p.resolve();
        } catch (e) {
          await this.dropHandle();
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private async dropHandle(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    try {
      await fh?.close();
    } catch {
      /* already unusable */
    }
  }

  async reopen(): Promise<void> {
    await this.dropHandle();
    await this.handle();
  }

  async close(): Promise<void> {
    // Let queued lines finish (bounded: a hung disk must not hang seal or shutdown).
    for (let i = 0; i < 400 && (this.writing || this.queue.length); i++) await new Promise((r) => setTimeout(r, 5));
    await this.dropHandle();
  }
}

/** Writes lines to the daemon's stdout (`file_path=stdout`). */
export class StdoutSink implements AuditSink {
  async open(): Promise<void> {}
  write(line: string): Promise<void> {
    return new Promise((resolve, reject) => process.stdout.write(line, (e) => (e ? reject(e) : resolve())));
  }
  async reopen(): Promise<void> {}
  async close(): Promise<void> {}
}

/** Drops lines (`file_path=discard`), for measuring audit overhead. */
export class DiscardSink implements AuditSink {
  async open(): Promise<void> {}
  async write(): Promise<void> {}
  async reopen(): Promise<void> {}
  async close(): Promise<void> {}
}
