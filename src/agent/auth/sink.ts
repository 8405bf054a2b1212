/**
 * File sinks (`sink "file" { config = { path, mode }, wrap_ttl }`): the agent's token written
 * atomically (a private temporary file in the same folder, then rename) with the configured mode
 * (0640 by default). With `wrap_ttl` the file holds the JSON of a response-wrapping token that
 * unwraps to the token, as Vault Agent writes it.
 */
import { chmodSync, closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { SinkConfig } from '../config.js';
import type { Upstream } from '../upstream.js';

/** Write `data` to `path` atomically with `mode` (also when the file existed with another mode). */
export function writeAtomic(path: string, data: string | Buffer, mode: number): void {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  try {
    chmodSync(tmp, mode);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

export class FileSink {
  constructor(readonly cfg: SinkConfig) {}

  /** Write the token (or, with wrap_ttl, its wrapping token's JSON). */
  async write(up: Upstream, token: string): Promise<void> {
    let text = token;
    if (this.cfg.wrapTtl) {
      const r = await up.json('POST', 'sys/wrapping/wrap', { token, body: { token }, wrapTtl: this.cfg.wrapTtl });
      text = JSON.stringify(r.body?.wrap_info ?? {});
    }
    writeAtomic(this.cfg.path, text, this.cfg.mode);
  }

  /** Write an already wrapped login (method-level wrap_ttl): the wrap info as JSON. */
  writeWrapped(wrapInfo: unknown): void {
    writeAtomic(this.cfg.path, JSON.stringify(wrapInfo), this.cfg.mode);
  }
}
