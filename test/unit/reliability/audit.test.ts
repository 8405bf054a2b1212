import { describe, expect, it, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, statSync, mkdirSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { AuditBroker, normalizeDevicePath, type AuditRequest } from '../../../src/audit/audit-broker.js';
import { hashStructure, hashValue } from '../../../src/audit/audit-hash.js';
import { FileSink } from '../../../src/audit/file-device.js';
import { isKeyholdError } from '../../../src/framework/errors.js';
import type { Storage } from '../../../src/storage/backend.js';

function memStorage(): Storage & { map: Map<string, Buffer> } {
  const map = new Map<string, Buffer>();
  return {
    map,
    get: async (k) => map.get(k) ?? null,
    put: async (k, v) => void map.set(k, Buffer.from(v)),
    delete: async (k) => void map.delete(k),
    list: async (p) => [...map.keys()].filter((k) => k.startsWith(p)).map((k) => k.slice(p.length)),
  };
}

const logs: string[] = [];
const logger = {
  debug: (m: string) => logs.push(m),
  info: (m: string) => logs.push(m),
  warn: (m: string) => logs.push(m),
  error: (m: string, f?: Record<string, unknown>) => logs.push(m + JSON.stringify(f ?? {})),
};

const open: AuditBroker[] = [];
function broker(storage = memStorage()): AuditBroker {
  return track(
    new AuditBroker({
      storage,
      clock: { now: () => Date.UTC(2025, 0, 2, 3, 4, 5) },
      logger,
      mountOf: (p) =>
        p.startsWith('transit/')
          ? {
              path: 'transit/',
              type: 'transit',
              accessor: 'transit_abcd',
              uuid: 'u',
              description: '',
              options: null,
              config: {},
              local: false,
              seal_wrap: false,
              external_entropy_access: false,
            }
          : undefined,
    }),
  );
}
function track(b: AuditBroker): AuditBroker {
  open.push(b);
  return b;
}

const TOKEN = 'hvs.SECRETTOKENvalue0123456789';
const PLAINTEXT = 'dG9wIHNlY3JldCBwbGFpbnRleHQ='; // base64 of "top secret plaintext"

function req(over: Partial<AuditRequest> = {}): AuditRequest {
  return {
    requestId: 'req-1',
    operation: 'update',
    path: 'transit/encrypt/k1',
    remoteAddress: '127.0.0.1',
    token: { id: TOKEN, accessor: 'ACCESSORabc', policies: ['default', 'enc'], root: false, displayName: 'token-x' },
    data: { plaintext: PLAINTEXT, key_version: 3, name: 'k1' },
    sensitive: new Set(['plaintext']),
    ...over,
  };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'keyhold-audit-'));
  logs.length = 0;
});
afterEach(async () => {
  for (const b of open.splice(0)) await b.unload();
  rmSync(dir, { recursive: true, force: true });
});

function lines(file: string): Array<Record<string, any>> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe('audit hashing', () => {
  it('hashes a value as hmac-sha256:<hex> matching an independent HMAC-SHA256 (@noble/hashes)', () => {
    const salt = Buffer.from('00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff', 'hex');
    for (const v of ['', 'root', 'ünïcødé ✓', 'x'.repeat(1000)]) {
      expect(hashValue(salt, v)).toBe('hmac-sha256:' + bytesToHex(hmac(sha256, salt, new TextEncoder().encode(v))));
    }
  });

  it('hashes every string at any depth, keeps keys, numbers and booleans outside sensitive fields', () => {
    const salt = Buffer.alloc(32, 7);
    const out = hashStructure({ a: 'x', n: 5, b: true, z: null, list: ['y', 2, { c: 'w' }] }, salt) as any;
    expect(out).toEqual({
      a: hashValue(salt, 'x'),
      n: 5,
      b: true,
      z: null,
      list: [hashValue(salt, 'y'), 2, { c: hashValue(salt, 'w') }],
    });
  });

  it('hashes numbers and booleans under a sensitive field (a numeric secret does not leak)', () => {
    const salt = Buffer.alloc(32, 9);
    const out = hashStructure(
      { data: { pin: 123456, ok: false, nested: [42] }, version: 2 },
      salt,
      new Set(['data']),
    ) as any;
    expect(out.data).toEqual({
      pin: hashValue(salt, '123456'),
      ok: hashValue(salt, 'false'),
      nested: [hashValue(salt, '42')],
    });
    expect(out.version).toBe(2);
  });
});

describe('audit broker with a file device', () => {
  it('writes a request and a response line with time, request id, accessor, operation, path, remote address, status, and no raw secret', async () => {
    const b = broker();
    const file = join(dir, 'audit.log');
    await b.enable('file', { type: 'file', options: { file_path: file } });
    const e = req();
    await b.request(e);
    await b.response(e, 200, { data: { ciphertext: 'vault:v1:SECRETCIPHERTEXT', key_version: 1 }, auth: null });
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(PLAINTEXT);
    expect(text).not.toContain('SECRETCIPHERTEXT');
    expect(text).not.toContain('ACCESSORabc');
    const [rq, rs] = lines(file);
    expect(rq!.type).toBe('request');
    expect(rq!.time).toBe('2025-01-02T03:04:05.000Z');
    expect(rq!.request).toMatchObject({
      id: 'req-1',
      operation: 'update',
      path: 'transit/encrypt/k1',
      remote_address: '127.0.0.1',
      mount_type: 'transit',
      mount_accessor: 'transit_abcd',
    });
    expect(rq!.request.data.plaintext).toBe(b.hash('file', PLAINTEXT));
    expect(rq!.request.data.key_version).toBe(3);
    expect(rq!.auth.client_token).toBe(b.hash('file', TOKEN));
    expect(rq!.auth.accessor).toBe(b.hash('file/', 'ACCESSORabc'));
    expect(rq!.auth.policies).toEqual(['default', 'enc']);
    expect(rs!.type).toBe('response');
    expect(rs!.response.status).toBe(200);
    expect(rs!.response.data.ciphertext).toBe(b.hash('file', 'vault:v1:SECRETCIPHERTEXT'));
  });

  it('logs accessors in clear when hmac_accessor=false, tokens still hashed', async () => {
    const b = broker();
    const file = join(dir, 'a.log');
    await b.enable('clear-acc', { type: 'file', options: { file_path: file, hmac_accessor: 'false' } });
    await b.request(req());
    const [rq] = lines(file);
    expect(rq!.auth.accessor).toBe('ACCESSORabc');
    expect(rq!.auth.client_token).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
  });

  it('hashes tokens in response auth blocks (token creation) and records errors', async () => {
    const b = broker();
    const file = join(dir, 'a.log');
    await b.enable('file', { type: 'file', options: { path: file } });
    const e = req({ path: 'auth/token/create', data: {} });
    await b.response(e, 200, {
      data: null,
      auth: { client_token: 'hvs.NEWTOKENsecret', accessor: 'NEWACC', policies: ['p'], lease_duration: 60 },
    });
    await b.response(req(), 400, { errors: ['plaintext: must be valid base64'] });
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('hvs.NEWTOKENsecret');
    const [ok, bad] = lines(file);
    expect(ok!.response.auth).toMatchObject({
      client_token: b.hash('file', 'hvs.NEWTOKENsecret'),
      accessor: b.hash('file', 'NEWACC'),
      policies: ['p'],
      lease_duration: 60,
    });
    expect(bad!.error).toBe('plaintext: must be valid base64');
    expect(bad!.response.status).toBe(400);
  });

  it('gives each device its own salt: the same value hashes differently per device', async () => {
    const b = broker();
    await b.enable('one', { type: 'file', options: { file_path: join(dir, '1.log') } });
    await b.enable('two', { type: 'file', options: { file_path: join(dir, '2.log') } });
    expect(b.hash('one', 'v')).not.toBe(b.hash('two', 'v'));
    await b.request(req());
    expect(lines(join(dir, '1.log'))[0]!.request.data.plaintext).toBe(b.hash('one', PLAINTEXT));
    expect(lines(join(dir, '2.log'))[0]!.request.data.plaintext).toBe(b.hash('two', PLAINTEXT));
  });

  it('keeps the device table and salt across a restart (hashes stay searchable), and forgets them on disable', async () => {
    const storage = memStorage();
    const b1 = broker(storage);
    await b1.enable('file', { type: 'file', description: 'main log', options: { file_path: join(dir, 'a.log') } });
    const h1 = b1.hash('file', 'secret-value');
    await b1.unload();
    expect(b1.enabled()).toBe(false);
    const b2 = broker(storage);
    await b2.load();
    expect(b2.enabled()).toBe(true);
    expect(b2.hash('file', 'secret-value')).toBe(h1);
    expect(b2.list()).toEqual({
      'file/': {
        path: 'file/',
        type: 'file',
        description: 'main log',
        options: { file_path: join(dir, 'a.log') },
        local: false,
      },
    });
    // The salt is stored, never the plaintext of anything hashed.
    for (const v of storage.map.values()) expect(v.toString('latin1')).not.toContain('secret-value');
    await b2.disable('file');
    expect(b2.enabled()).toBe(false);
    const b3 = broker(storage);
    await b3.load();
    expect(b3.enabled()).toBe(false);
    expect([...storage.map.keys()].filter((k) => k.startsWith('salt/'))).toEqual([]);
  });

  it('creates the log file with mode 0600 and applies an explicit mode', async () => {
    const b = broker();
    await b.enable('a', { type: 'file', options: { file_path: join(dir, 'a.log') } });
    await b.enable('b', { type: 'file', options: { file_path: join(dir, 'b.log'), mode: '0640' } });
    expect(statSync(join(dir, 'a.log')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'b.log')).mode & 0o777).toBe(0o640);
  });

  it('elides list keys to a count when elide_list_responses=true', async () => {
    const b = broker();
    const file = join(dir, 'a.log');
    await b.enable('file', { type: 'file', options: { file_path: file, elide_list_responses: 'true' } });
    await b.response(req({ operation: 'list', path: 'transit/keys', data: {} }), 200, {
      data: { keys: ['a', 'b', 'c'] },
      auth: null,
    });
    expect(lines(file)[0]!.response.data.keys).toBe(3);
  });

  it.each([
    [{ type: 'file', options: {} }, 'options.file_path: is required'],
    [{ type: 'file', options: { file_path: 'relative.log' } }, 'options.file_path: must be an absolute path'],
    [{ type: 'file', options: { file_path: '/tmp/x.log', log_raw: 'true' } }, 'options.log_raw: is not supported'],
    [{ type: 'file', options: { file_path: '/tmp/x.log', format: 'jsonx' } }, 'options.format: must be "json"'],
    [{ type: 'file', options: { file_path: '/tmp/x.log', mode: 'rwx' } }, 'options.mode: must be an octal file mode'],
    [{ type: 'kafka', options: {} }, 'type: unknown audit device type "kafka"'],
    [{ type: 'socket', options: {} }, 'options.address: is required'],
    [{ type: 'syslog', options: { facility: 'nope' } }, 'options.facility: unknown facility'],
  ])('rejects bad device config %j with 400 naming the field', async (input, msg) => {
    const b = broker();
    const err = await b.enable('file', input as never).catch((e) => e);
    expect(isKeyholdError(err) && err.status).toBe(400);
    expect(err.message).toContain(msg);
    expect(b.enabled()).toBe(false);
  });

  it('rejects a path already in use, a traversal path, and a file that cannot be opened', async () => {
    const b = broker();
    await b.enable('file', { type: 'file', options: { file_path: join(dir, 'a.log') } });
    await expect(b.enable('file/', { type: 'file', options: { file_path: join(dir, 'b.log') } })).rejects.toThrow(
      /path already in use/,
    );
    await expect(b.enable('../x', { type: 'file', options: { file_path: join(dir, 'b.log') } })).rejects.toThrow(
      /invalid audit device path/,
    );
    expect(() => normalizeDevicePath('a/../b')).toThrow(/invalid audit device path/);
    const err = await b
      .enable('other', { type: 'file', options: { file_path: join(dir, 'missing-dir', 'x.log') } })
      .catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.message).toBe('options.file_path: cannot open for appending: ENOENT');
  });
});

describe('audit fails closed', () => {
  it('refuses the request (503) when the only device cannot write (/dev/full: ENOSPC)', async () => {
    const b = broker();
    await b.enable('full', { type: 'file', options: { file_path: '/dev/full', mode: '0000' } });
    const err = await b.request(req()).catch((e) => e);
    expect(isKeyholdError(err)).toBe(true);
    expect(err.status).toBe(503);
    expect(err.message).toMatch(/no enabled audit device could record/);
    await expect(b.response(req(), 200, { data: {}, auth: null })).rejects.toThrow(/no enabled audit device/);
    expect(logs.some((l) => l.includes('ENOSPC'))).toBe(true);
    expect(logs.join('\n')).not.toContain(PLAINTEXT);
    expect(logs.join('\n')).not.toContain(TOKEN);
  });

  it('serves the request when at least one of several devices writes (Vault rule)', async () => {
    const b = broker();
    await b.enable('full', { type: 'file', options: { file_path: '/dev/full', mode: '0000' } });
    await b.enable('good', { type: 'file', options: { file_path: join(dir, 'good.log') } });
    await b.request(req());
    expect(lines(join(dir, 'good.log'))).toHaveLength(1);
  });

  it('fails while the file cannot be written, then recovers by reopening once it can', async () => {
    const sub = join(dir, 'logs');
    mkdirSync(sub);
    const file = join(sub, 'a.log');
    const b = broker();
    await b.enable('file', { type: 'file', options: { file_path: file } });
    await b.unload();
    // Restart with the log directory now read-only and the file gone: the device cannot open.
    rmSync(file);
    chmodSync(sub, 0o500);
    const b2 = broker((b as any).deps.storage);
    await b2.load();
    const isRoot = process.getuid?.() === 0;
    if (!isRoot) await expect(b2.request(req())).rejects.toThrow(/no enabled audit device/);
    chmodSync(sub, 0o700);
    await b2.request(req());
    expect(lines(file)).toHaveLength(1);
  });
});

describe('file sink', () => {
  it('keeps every line whole and in order under 2,000 concurrent writes', async () => {
    const file = join(dir, 'c.log');
    const s = new FileSink(file);
    await s.open();
    await Promise.all(
      Array.from({ length: 2000 }, (_, i) => s.write(JSON.stringify({ i, pad: 'x'.repeat(i % 97) }) + '\n')),
    );
    await s.close();
    const got = lines(file).map((l) => l.i);
    expect(got).toEqual(Array.from({ length: 2000 }, (_, i) => i));
  });
});
