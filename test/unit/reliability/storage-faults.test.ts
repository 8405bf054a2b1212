import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Core } from '../../../src/server/core/core.js';
import { Router } from '../../../src/server/router.js';
import { startListeners, type Listeners } from '../../../src/server/http.js';
import { FileBackend } from '../../../src/storage/file.js';
import type { Backend } from '../../../src/storage/backend.js';
import { NoKeychain } from '../../../src/seal/keychain.js';
import { createLogger } from '../../../src/framework/logger.js';
import { httpReq, type Answer } from '../../support/daemon.js';

/** A backend whose writes fail like a full disk (ENOSPC) when told to; reads keep working. */
class FullDiskBackend implements Backend {
  /** Fail every put/delete from now on. */
  full = false;
  /** Fail only the put after this many more succeed (-1: off), to cut multi-record writes in half. */
  failAfter = -1;
  puts = 0;
  constructor(private readonly inner: Backend) {}
  private check(): void {
    if (this.failAfter === 0 || this.full) {
      this.failAfter = -1;
      const e = new Error('ENOSPC: no space left on device, write') as NodeJS.ErrnoException;
      e.code = 'ENOSPC';
      throw e;
    }
    if (this.failAfter > 0) this.failAfter--;
  }
  get(k: string) {
    return this.inner.get(k);
  }
  async put(k: string, v: Buffer) {
    this.check();
    this.puts++;
    return this.inner.put(k, v);
  }
  async delete(k: string) {
    this.check();
    return this.inner.delete(k);
  }
  list(p: string) {
    return this.inner.list(p);
  }
  close() {
    return this.inner.close();
  }
  describe() {
    return 'full-disk:' + this.inner.describe();
  }
}

let dir: string;
let socket: string;
let listeners: Listeners;
let core: Core;
let disk: FullDiskBackend;
let root: string;
let recovery: string;
const logLines: string[] = [];

async function boot(): Promise<void> {
  const fb = new FileBackend(join(dir, 'data'));
  fb.openSync();
  disk = new FullDiskBackend(fb);
  core = new Core({
    backend: disk,
    keychain: new NoKeychain(),
    logger: createLogger('debug', (l) => void logLines.push(l)),
    maxRequestSize: 1 << 20,
    version: 'test',
  });
  await core.start();
  const router = new Router(core);
  listeners = await startListeners([{ type: 'unix', path: socket }], (req, res) => void router.handle(req, res));
}

async function shutdown(): Promise<void> {
  await listeners.close(100);
  await core.close();
}

function req(method: string, path: string, body?: unknown): Promise<Answer> {
  return httpReq({ socket }, method, path, body, { token: root });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keyhold-fulldisk-'));
  socket = join(dir, 's.sock');
  await boot();
  const init = await httpReq({ socket }, 'POST', 'sys/init', { keychain: false });
  root = init.body.root_token;
  recovery = init.body.keys[0];
  expect((await req('POST', 'sys/mounts/transit', { type: 'transit' })).status).toBe(204);
  expect((await req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } })).status).toBe(204);
});

afterAll(async () => {
  await shutdown();
  rmSync(dir, { recursive: true, force: true });
});

describe('full disk: write errors answer cleanly and corrupt nothing', () => {
  let ciphertext: string;

  it('sets up a key, a ciphertext and a secret while the disk has room', async () => {
    expect((await req('POST', 'transit/keys/k1', {})).status).toBe(200);
    const e = await req('POST', 'transit/encrypt/k1', { plaintext: 'aGVsbG8=' });
    ciphertext = e.body.data.ciphertext;
    expect((await req('POST', 'secret/data/app', { data: { v: 'one' } })).status).toBe(200);
  });

  it('answers every write with a clean 5xx (no crash, no hang) while the disk is full', async () => {
    disk.full = true;
    const writes: Array<[string, string, unknown]> = [
      ['POST', 'transit/keys/k2', {}],
      ['POST', 'transit/keys/k1/rotate', {}],
      ['POST', 'transit/keys/k1/config', { deletion_allowed: true }],
      ['POST', 'secret/data/app', { data: { v: 'two' } }],
      ['POST', 'sys/policies/acl/p', { policy: 'path "x" { capabilities = ["read"] }' }],
      ['POST', 'auth/token/create', { policies: ['default'] }],
      ['POST', 'sys/audit/file', { type: 'file', options: { file_path: join(dir, 'audit.log') } }],
    ];
    for (const [m, p, b] of writes) {
      const r = await req(m, p, b);
      expect({ p, status: r.status >= 500 && r.status <= 503 }).toEqual({ p, status: true });
      expect(r.body.errors).toBeInstanceOf(Array);
      expect(r.text).not.toContain('ENOSPC'); // internals are logged, not sent
    }
    expect(logLines.some((l) => l.includes('ENOSPC'))).toBe(true);
  });

  it('keeps serving reads and encryption with existing keys while the disk is full', async () => {
    const d = await req('POST', 'transit/decrypt/k1', { ciphertext });
    expect(d.body.data.plaintext).toBe('aGVsbG8=');
    const k = await req('GET', 'transit/keys/k1');
    expect(k.body.data.latest_version).toBe(1); // the failed rotation left no trace, even in memory
    expect(k.body.data.deletion_allowed).toBe(false);
    const s = await req('GET', 'secret/data/app');
    expect(s.body.data.data).toEqual({ v: 'one' });
    expect(s.body.data.metadata.version).toBe(1);
    expect((await req('GET', 'transit/keys/k2')).status).toBe(404);
    expect((await req('GET', 'sys/audit')).body.data).toEqual({});
  });

  it('resumes once the disk has room: versions continue from the last durable one', async () => {
    disk.full = false;
    const r = await req('POST', 'transit/keys/k1/rotate', {});
    expect(r.status).toBe(200);
    expect(r.body.data.latest_version).toBe(2);
    const w = await req('POST', 'secret/data/app', { data: { v: 'two' } });
    expect(w.body.data.version).toBe(2);
  });

  it('a write cut in half by the disk filling mid-way leaves the old state readable, and the next write is consistent', async () => {
    for (let cut = 0; cut < 4; cut++) {
      disk.failAfter = cut;
      const before = (await req('GET', 'secret/metadata/app')).body.data.current_version as number;
      const w = await req('POST', 'secret/data/app', { data: { v: `cut-${cut}` } });
      disk.failAfter = -1;
      const meta = await req('GET', 'secret/metadata/app');
      const cur = meta.body.data.current_version as number;
      const latest = await req('GET', 'secret/data/app');
      expect(latest.status).toBe(200);
      if (w.status === 200) expect(cur).toBe(before + 1);
      else expect(w.status).toBeGreaterThanOrEqual(500);
      // Whatever the metadata says is current can be read whole.
      expect(latest.body.data.metadata.version).toBe(cur);
      if (cur === before + 1) expect(latest.body.data.data).toEqual({ v: `cut-${cut}` });
    }
    for (let cut = 0; cut < 3; cut++) {
      disk.failAfter = cut;
      const before = (await req('GET', 'transit/keys/k1')).body.data.latest_version as number;
      const r = await req('POST', 'transit/keys/k1/rotate', {});
      disk.failAfter = -1;
      const after = (await req('GET', 'transit/keys/k1')).body.data.latest_version as number;
      expect(after).toBe(r.status === 200 ? before + 1 : before);
      const e = await req('POST', 'transit/encrypt/k1', { plaintext: 'aGk=' });
      expect(e.body.data.ciphertext.startsWith(`vault:v${after}:`)).toBe(true);
    }
  });

  it('after a restart on the same storage every durable record reads back intact', async () => {
    const keyBefore = (await req('GET', 'transit/keys/k1')).body.data;
    const kvBefore = (await req('GET', 'secret/data/app')).body.data;
    await shutdown();
    await boot();
    expect((await httpReq({ socket }, 'POST', 'sys/unseal', { key: recovery })).body.sealed).toBe(false);
    expect((await req('GET', 'transit/keys/k1')).body.data).toEqual(keyBefore);
    expect((await req('GET', 'secret/data/app')).body.data).toEqual(kvBefore);
    expect((await req('POST', 'transit/decrypt/k1', { ciphertext })).body.data.plaintext).toBe('aGVsbG8=');
  });
});
