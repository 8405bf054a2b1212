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
    [
      { listeners: [{ type: 'tcp', address: '127.0.0.1:1', tls_cert: 'c' }] },
      /listeners\[0\] needs both tls_cert and tls_key/,
    ],
    [{ listeners: [{ type: 'udp' }] }, /listeners\[0\]\.type must be "unix" or "tcp"/],
    [
      { listeners: [{ type: 'unix', max_request_size: -1 }] },
      /listeners\[0\]\.max_request_size must be a positive integer/,
    ],
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
    const r = resolveConfig(
      {
        config: cfg(),
        socket: '/tmp/f.sock',
        listen: ['0.0.0.0:9'],
        storagePath: '/data',
        maxRequestSize: 10,
        logLevel: 'debug',
        keychain: 'os',
      },
      env,
    );
    expect(r.storage.path).toBe('/data');
    expect(r.listenerSpecs).toEqual([
      { type: 'unix', path: '/tmp/f.sock', maxRequestSize: 10 },
      { type: 'tcp', address: '0.0.0.0:9', tlsCert: undefined, tlsKey: undefined },
    ]);
    expect(r).toMatchObject({ max_request_size: 10, log_level: 'debug', keychain: 'os' });
  });

  it('defaults to the per-user socket and storage, 32 MiB and info', () => {
    const r = resolveConfig({}, env);
    expect(r.listenerSpecs).toEqual([
      { type: 'unix', path: join(dir, 'run', 'keyhold.sock'), maxRequestSize: undefined },
    ]);
    expect(r.storage).toEqual({ type: 'file', path: join(dir, 'data') });
    expect(r).toMatchObject({ max_request_size: 32 * 1024 * 1024, log_level: 'info', keychain: 'os' });
    expect(resolveConfig({ dev: true }, env).storage).toEqual({ type: 'inmem' });
  });

  it('drops the Unix socket only when asked, or when the file names only TCP listeners', () => {
    expect(resolveConfig({ noSocket: true, listen: ['127.0.0.1:1'] }, env).listenerSpecs.map((s) => s.type)).toEqual([
      'tcp',
    ]);
    const tcpOnly = file({ listeners: [{ type: 'tcp', address: '127.0.0.1:1' }] });
    expect(resolveConfig({ config: tcpOnly }, env).listenerSpecs.map((s) => s.type)).toEqual(['tcp']);
    expect(resolveConfig({ config: tcpOnly, socket: '/s' }, env).listenerSpecs.map((s) => s.type)).toEqual([
      'unix',
      'tcp',
    ]);
    expect(() => resolveConfig({ noSocket: true }, env)).toThrow(/no listener/);
  });

  it('checks flag values', () => {
    expect(() => resolveConfig({ tlsCert: 'c' }, env)).toThrow(/--tls-cert and --tls-key go together/);
    expect(() => resolveConfig({ maxRequestSize: Number('x') }, env)).toThrow(
      /--max-request-size must be a positive integer/,
    );
    expect(() => resolveConfig({ listen: ['8200'] }, env)).toThrow(/--listen must be host:port, got "8200"/);
  });
});

function hcl(text: string, ext = 'hcl'): string {
  const p = join(dir, `c${n++}.${ext}`);
  writeFileSync(p, text);
  return p;
}

describe("Vault's HCL config format", () => {
  const cluster = `# node a of three
storage "postgresql" {
  connection_url = "postgres://keyhold@db/keyhold?sslmode=disable"
  ha_enabled     = true
  max_parallel   = 16
  table          = "vault_kv_store"
}
listener "tcp" {
  address     = "127.0.0.1:8200"
  tls_disable = "true"
  max_request_size = 1048576
}
listener "unix" {
  address     = "/run/keyhold/a.sock"
  socket_mode = "660"
}
api_addr      = "http://10.0.0.1:8200"
cluster_addr  = "https://10.0.0.1:8201"
cluster_name  = "keyhold-prod"
log_level     = "warn"
disable_mlock = true
ui            = "true"
keychain      = "none"
disable_standby_reads = false
seal "transit" {
  address    = "https://unseal:8200"
  key_name   = "autounseal"
  mount_path = "transit/"
  disable_renewal = true
}
kms_library "pkcs11" {
  name    = "softhsm"
  library = "/usr/lib/softhsm/libsofthsm2.so"
}
`;

  it('reads a three-node cluster config into the typed config', () => {
    const r = resolveConfig({ config: hcl(cluster) }, env);
    expect(r.storage).toEqual({
      type: 'postgresql',
      params: {
        connection_url: 'postgres://keyhold@db/keyhold?sslmode=disable',
        ha_enabled: 'true',
        max_parallel: '16',
        table: 'vault_kv_store',
      },
    });
    expect(r.listenerSpecs).toEqual([
      { type: 'unix', path: '/run/keyhold/a.sock', maxRequestSize: undefined, socketMode: 0o660 },
      { type: 'tcp', address: '127.0.0.1:8200', tlsCert: undefined, tlsKey: undefined, maxRequestSize: 1048576 },
    ]);
    expect(r).toMatchObject({
      api_addr: 'http://10.0.0.1:8200',
      cluster_addr: 'https://10.0.0.1:8201',
      cluster_name: 'keyhold-prod',
      log_level: 'warn',
      disable_mlock: true,
      ui: true,
      keychain: 'none',
      disable_standby_reads: false,
      seal: {
        type: 'transit',
        params: {
          address: 'https://unseal:8200',
          key_name: 'autounseal',
          mount_path: 'transit/',
          disable_renewal: true,
        },
      },
      kmsLibraries: [{ type: 'pkcs11', name: 'softhsm', library: '/usr/lib/softhsm/libsofthsm2.so' }],
    });
  });

  it('lets flags and VAULT_API_ADDR win over the file', () => {
    const r = resolveConfig(
      { config: hcl(cluster), logLevel: 'debug', socket: '/tmp/x.sock', keychain: 'os' },
      { ...env, VAULT_API_ADDR: 'http://10.9.9.9:8200' },
    );
    expect(r).toMatchObject({ log_level: 'debug', keychain: 'os', api_addr: 'http://10.9.9.9:8200' });
    expect(r.listenerSpecs[0]).toMatchObject({ type: 'unix', path: '/tmp/x.sock' });
  });

  it('reads file and inmem storage, aliases and lifted storage keys', () => {
    const r = resolveConfig(
      {
        config: hcl(
          'backend "file" {\n path = "/var/lib/k"\n redirect_addr = "http://a:8200"\n}\nlistener "unix" {}\n',
        ),
      },
      env,
    );
    expect(r.storage).toEqual({ type: 'file', path: '/var/lib/k', params: { path: '/var/lib/k' } });
    expect(r.api_addr).toBe('http://a:8200');
    expect(resolveConfig({ config: hcl('storage "inmem" {}\n') }, env).storage).toEqual({ type: 'inmem', params: {} });
  });

  it("reads Vault's JSON shape too", () => {
    const p = hcl(
      JSON.stringify({
        storage: { postgresql: { connection_url: 'postgres://x/y', ha_enabled: 'true' } },
        listener: [{ tcp: { address: '127.0.0.1:8200', tls_disable: 'true' } }],
        ui: true,
      }),
      'json',
    );
    const r = resolveConfig({ config: p }, env);
    expect(r.storage).toEqual({ type: 'postgresql', params: { connection_url: 'postgres://x/y', ha_enabled: 'true' } });
    expect(r.listenerSpecs).toEqual([
      { type: 'tcp', address: '127.0.0.1:8200', tlsCert: undefined, tlsKey: undefined, maxRequestSize: undefined },
    ]);
  });

  it.each([
    [
      'storage "postgresql" {\n  connection_url = "x"\n  tabel = "t"\n}\n',
      3,
      'storage.postgresql.tabel: unknown key (allowed: connection_url',
    ],
    ['storage "s3" {\n}\n', 1, 'storage.s3: unknown storage type "s3"'],
    [
      'listener "tcp" {\n  address = "127.0.0.1:8200"\n}\n',
      1,
      'listener.tcp: needs tls_cert_file and tls_key_file, or tls_disable = true',
    ],
    [
      'listener "tcp" {\n  address = "127.0.0.1:8200"\n  tls_disable = "maybe"\n}\n',
      3,
      'listener.tcp.tls_disable: must be a boolean (true or false), got "maybe"',
    ],
    ['listener "udp" {}\n', 1, 'listener.udp: unsupported listener type "udp"'],
    ['listener "unix" {\n  socket_mode = "rw"\n}\n', 2, 'listener.unix.socket_mode: must be an octal mode'],
    ['ui = [true]\n', 1, 'ui: must be a boolean, got a list'],
    ['api_addr = "10.0.0.1:8200"\n', 1, 'api_addr: must be a URL with scheme'],
    ['\n\nlog_level = "loud"\n', 3, 'log_level: must be one of trace, debug, info, warn, error, off'],
    ['keychain = "kwallet"\n', 1, 'keychain: must be "os" or "none"'],
    ['storage "file" {}\n', 1, 'storage.file: needs path'],
    ['storage "file" {\n path = ["a"]\n}\n', 2, 'storage.file.path: must be a string, number or boolean, got a list'],
    ['max_lease = "1h"\n', 1, 'max_lease: unknown key (allowed: storage,'],
    ['cluster_name = "a"\ncluster_name = "b"\n', 2, 'cluster_name: given twice'],
    ['kms_library "pkcs11" {\n  name = "h"\n}\n', 1, 'kms_library.pkcs11: needs library'],
    [
      'seal "transit" {\n  key_name = ["k"]\n}\n',
      2,
      'seal.transit.key_name: must be a string, number or boolean, got a list',
    ],
    ['storage "file" {\n  path = "/x"\n', 3, 'syntax error: object opened at line 1 is not closed'],
  ])('refuses %j with one line naming file, line %i and key', (text, line, why) => {
    const p = hcl(text);
    let msg = '';
    try {
      loadConfigFile(p);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      msg = (e as Error).message;
    }
    expect(msg).toContain(`config ${p}:${line}: ${why}`);
    expect(msg).not.toContain('\n');
  });
});
