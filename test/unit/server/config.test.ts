import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile, resolveConfig } from '../../../src/server/daemon.js';

const dir = mkdtempSync(join(tmpdir(), 'keyhold-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function file(doc: unknown): string {
  const p = join(dir, `c${n++}.json`);
  writeFileSync(p, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return p;
}
const env = { KEYHOLD_HOME: dir };

describe('config file validation', () => {
  it.each([
    [{ listners: [] }, /unknown key "listners"/],
    [{ max_request_size: 'big' }, /max_request_size must be a positive integer/],
    [{ max_request_size: 0 }, /max_request_size must be a positive integer/],
    [{ listeners: [{ type: 'tcp', address: 'nope' }] }, /listeners\[0\]\.address must be "host:port"/],
    [{ listeners: [{ type: 'tcp', address: '127.0.0.1:1', tls_cert: 'c' }] }, /listeners\[0\] needs both tls_cert and tls_key/],
    [{ listeners: [{ type: 'udp' }] }, /listeners\[0\]\.type must be "unix" or "tcp"/],
    [{ listeners: [{ type: 'unix', max_request_size: -1 }] }, /listeners\[0\]\.max_request_size must be a positive integer/],
    [{ listeners: {} }, /listeners must be a list/],
    [{ storage: { type: 's3' } }, /storage type must be "file" or "inmem"/],
    [{ storage: { path: '' } }, /storage path must be a non-empty string/],
    [{ storage: { type: 'file', bucket: 'x' } }, /storage unknown key "bucket"/],
    [{ log_level: 'loud' }, /log_level must be one of debug, info, warn, error, off/],
    [{ keychain: 'kwallet' }, /keychain must be "os" or "none"/],
    [[1, 2], /must be a JSON object/],
    ['{not json', /invalid JSON/],
  ])('refuses %j naming the file and the key', (doc, why) => {
    const p = file(doc);
    expect(() => loadConfigFile(p)).toThrow(ConfigError);
    expect(() => loadConfigFile(p)).toThrow(new RegExp(`^config ${p.replace(/[/.]/g, '\\$&')}: `));
    expect(() => loadConfigFile(p)).toThrow(why);
  });

  it('names a missing file', () => {
    expect(() => loadConfigFile(join(dir, 'absent.json'))).toThrow(/cannot read \(ENOENT\)/);
  });
});

describe('config merging (flags win)', () => {
  const cfg = () =>
    file({
      storage: { path: '/var/lib/k' },
      listeners: [
        { type: 'unix', path: '/run/k.sock', max_request_size: 100 },
        { type: 'tcp', address: '127.0.0.1:8200', tls_cert: 'c.pem', tls_key: 'k.pem' },
      ],
      max_request_size: 4096,
      log_level: 'warn',
      keychain: 'none',
    });

  it('takes every value from the file', () => {
    const r = resolveConfig({ config: cfg() }, env);
    expect(r.storage).toEqual({ type: 'file', path: '/var/lib/k' });
    expect(r.listenerSpecs).toEqual([
      { type: 'unix', path: '/run/k.sock', maxRequestSize: 100 },
      { type: 'tcp', address: '127.0.0.1:8200', tlsCert: 'c.pem', tlsKey: 'k.pem', maxRequestSize: undefined },
    ]);
    expect(r).toMatchObject({ max_request_size: 4096, log_level: 'warn', keychain: 'none' });
  });

  it('lets flags override the file', () => {
    const r = resolveConfig({ config: cfg(), socket: '/tmp/f.sock', listen: ['0.0.0.0:9'], storagePath: '/data', maxRequestSize: 10, logLevel: 'debug', keychain: 'os' }, env);
    expect(r.storage.path).toBe('/data');
    expect(r.listenerSpecs).toEqual([
      { type: 'unix', path: '/tmp/f.sock', maxRequestSize: 10 },
      { type: 'tcp', address: '0.0.0.0:9', tlsCert: undefined, tlsKey: undefined },
    ]);
    expect(r).toMatchObject({ max_request_size: 10, log_level: 'debug', keychain: 'os' });
  });

  it('defaults to the per-user socket and storage, 32 MiB and info', () => {
    const r = resolveConfig({}, env);
    expect(r.listenerSpecs).toEqual([{ type: 'unix', path: join(dir, 'run', 'keyhold.sock'), maxRequestSize: undefined }]);
    expect(r.storage).toEqual({ type: 'file', path: join(dir, 'data') });
    expect(r).toMatchObject({ max_request_size: 32 * 1024 * 1024, log_level: 'info', keychain: 'os' });
    expect(resolveConfig({ dev: true }, env).storage).toEqual({ type: 'inmem' });
  });

  it('drops the Unix socket only when asked, or when the file names only TCP listeners', () => {
    expect(resolveConfig({ noSocket: true, listen: ['127.0.0.1:1'] }, env).listenerSpecs.map((s) => s.type)).toEqual(['tcp']);
    const tcpOnly = file({ listeners: [{ type: 'tcp', address: '127.0.0.1:1' }] });
    expect(resolveConfig({ config: tcpOnly }, env).listenerSpecs.map((s) => s.type)).toEqual(['tcp']);
    expect(resolveConfig({ config: tcpOnly, socket: '/s' }, env).listenerSpecs.map((s) => s.type)).toEqual(['unix', 'tcp']);
    expect(() => resolveConfig({ noSocket: true }, env)).toThrow(/no listener/);
  });

  it('checks flag values', () => {
    expect(() => resolveConfig({ tlsCert: 'c' }, env)).toThrow(/--tls-cert and --tls-key go together/);
    expect(() => resolveConfig({ maxRequestSize: Number('x') }, env)).toThrow(/--max-request-size must be a positive integer/);
    expect(() => resolveConfig({ listen: ['8200'] }, env)).toThrow(/--listen must be host:port, got "8200"/);
  });
});
