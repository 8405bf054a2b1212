/**
 * Vault-client compatibility: the real `node-vault` client (node_modules/node-vault, v0.12) pointed at
 * a real keyhold daemon over TCP, doing what its users do. node-vault sends POST for `write`, the
 * `LIST` verb for `list` (GET ?list=1 with noCustomHTTPVerbs), GET for `read`, DELETE for `delete`,
 * X-Vault-Token on every call, and rejects on any status other than 200/204 (except sys/health).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodeVault from 'node-vault';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

type Client = ReturnType<typeof nodeVault>;

let d: Daemon;
let vault: Client;
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** The rejection of a node-vault call: statusCode and body of the error response. */
async function rejection(p: Promise<unknown>): Promise<{ statusCode: number; body: { errors?: string[] } }> {
  try {
    await p;
  } catch (e) {
    const r = (e as { response?: { statusCode: number; body: { errors?: string[] } } }).response;
    if (r) return r;
    throw e;
  }
  throw new Error('expected the call to be rejected');
}

beforeAll(async () => {
  d = await startDaemon({ tcp: true });
  vault = nodeVault({ endpoint: d.tcp!, token: 'root' });
});
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe('node-vault: transit through generic read/write/list/delete', () => {
  it('creates a key with write and reads it back with read (key data, versions, capabilities)', async () => {
    const created = await vault.write('transit/keys/nv-aes', {});
    expect(created.data).toMatchObject({ name: 'nv-aes', type: 'aes256-gcm96', latest_version: 1 });
    const r = await vault.read('transit/keys/nv-aes');
    expect(r.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r).toMatchObject({
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      wrap_info: null,
      warnings: null,
      auth: null,
    });
    expect(r.data).toMatchObject({
      name: 'nv-aes',
      type: 'aes256-gcm96',
      supports_encryption: true,
      supports_decryption: true,
      supports_signing: false,
      derived: false,
      exportable: false,
      deletion_allowed: false,
    });
    expect(Object.keys(r.data.keys)).toEqual(['1']);
    expect(typeof r.data.keys['1']).toBe('number');
  });

  it('encrypts and decrypts, rotates, and rewraps to the new version', async () => {
    const enc = await vault.write('transit/encrypt/nv-aes', { plaintext: b64('node-vault secret') });
    expect(enc.data.ciphertext).toMatch(/^vault:v1:[A-Za-z0-9+/]+=*$/);
    expect(enc.data.key_version).toBe(1);
    const dec = await vault.write('transit/decrypt/nv-aes', { ciphertext: enc.data.ciphertext });
    expect(Buffer.from(dec.data.plaintext, 'base64').toString()).toBe('node-vault secret');

    await vault.write('transit/keys/nv-aes/rotate', {});
    const key = await vault.read('transit/keys/nv-aes');
    expect(key.data.latest_version).toBe(2);
    expect(Object.keys(key.data.keys).sort()).toEqual(['1', '2']);

    const re = await vault.write('transit/rewrap/nv-aes', { ciphertext: enc.data.ciphertext });
    expect(re.data.ciphertext).toMatch(/^vault:v2:/);
    const dec2 = await vault.write('transit/decrypt/nv-aes', { ciphertext: re.data.ciphertext });
    expect(Buffer.from(dec2.data.plaintext, 'base64').toString()).toBe('node-vault secret');
  });

  it('uses the generated encryptData/decryptData helpers (name in the URL and in the body)', async () => {
    const enc = await vault.encryptData({ name: 'nv-aes', plaintext: b64('helper') });
    expect(enc.data.ciphertext).toMatch(/^vault:v2:/);
    const dec = await vault.decryptData({ name: 'nv-aes', ciphertext: enc.data.ciphertext });
    expect(Buffer.from(dec.data.plaintext, 'base64').toString()).toBe('helper');
  });

  it('generates a plaintext data key whose wrapped copy decrypts to the same bytes', async () => {
    const dk = await vault.write('transit/datakey/plaintext/nv-aes', { bits: 256 });
    expect(Buffer.from(dk.data.plaintext, 'base64')).toHaveLength(32);
    expect(dk.data.ciphertext).toMatch(/^vault:v2:/);
    const dec = await vault.write('transit/decrypt/nv-aes', { ciphertext: dk.data.ciphertext });
    expect(dec.data.plaintext).toBe(dk.data.plaintext);
    const wrapped = await vault.write('transit/datakey/wrapped/nv-aes', {});
    expect(wrapped.data.plaintext).toBeUndefined();
    expect(wrapped.data.ciphertext).toMatch(/^vault:v2:/);
  });

  it('computes an HMAC and verifies it (and rejects a different input)', async () => {
    const h = await vault.write('transit/hmac/nv-aes', { input: b64('msg') });
    expect(h.data.hmac).toMatch(/^vault:v2:[A-Za-z0-9+/]+=*$/);
    const ok = await vault.write('transit/verify/nv-aes', { input: b64('msg'), hmac: h.data.hmac });
    expect(ok.data.valid).toBe(true);
    const bad = await vault.write('transit/verify/nv-aes', { input: b64('other'), hmac: h.data.hmac });
    expect(bad.data.valid).toBe(false);
  });

  it('signs and verifies with an ed25519 key', async () => {
    const k = await vault.write('transit/keys/nv-ed', { type: 'ed25519' });
    expect(k.data.type).toBe('ed25519');
    expect(k.data.keys['1'].public_key).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const s = await vault.write('transit/sign/nv-ed', { input: b64('to sign') });
    expect(s.data.signature).toMatch(/^vault:v1:/);
    const v = await vault.write('transit/verify/nv-ed', { input: b64('to sign'), signature: s.data.signature });
    expect(v.data.valid).toBe(true);
    const v2 = await vault.write('transit/verify/nv-ed', { input: b64('tampered'), signature: s.data.signature });
    expect(v2.data.valid).toBe(false);
  });

  it('lists keys with the LIST verb (list and transitListKeys) and with GET ?list=1', async () => {
    const l = await vault.list('transit/keys');
    expect(l.data.keys).toEqual(['nv-aes', 'nv-ed']);
    const l2 = await vault.transitListKeys();
    expect(l2.data.keys).toEqual(['nv-aes', 'nv-ed']);
    const strict = nodeVault({ endpoint: d.tcp!, token: 'root', noCustomHTTPVerbs: true });
    const l3 = await strict.list('transit/keys');
    expect(l3.data.keys).toEqual(['nv-aes', 'nv-ed']);
  });

  it('rejects a read of a missing key with 404 {"errors":[]} and a delete without deletion_allowed with 400', async () => {
    const miss = await rejection(vault.read('transit/keys/absent'));
    expect(miss.statusCode).toBe(404);
    expect(miss.body).toEqual({ errors: [] });
    const del = await rejection(vault.delete('transit/keys/nv-ed'));
    expect(del.statusCode).toBe(400);
    expect(del.body.errors?.[0]).toMatch(/deletion/);
    await vault.write('transit/keys/nv-ed/config', { deletion_allowed: true });
    await expect(vault.delete('transit/keys/nv-ed')).resolves.toBeDefined();
    expect((await rejection(vault.read('transit/keys/nv-ed'))).statusCode).toBe(404);
  });
});

describe('node-vault: KV v2', () => {
  it('writes with {data}, reads data+metadata, lists metadata and deletes', async () => {
    const w = await vault.write('secret/data/nv/app', { data: { user: 'alice', pass: 's3cret' } });
    expect(w.data).toMatchObject({ version: 1, destroyed: false, deletion_time: '' });
    expect(w.data.created_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const w2 = await vault.write('secret/data/nv/app', {
      data: { user: 'alice', pass: 'rotated' },
      options: { cas: 1 },
    });
    expect(w2.data.version).toBe(2);

    const r = await vault.read('secret/data/nv/app');
    expect(r.data.data).toEqual({ user: 'alice', pass: 'rotated' });
    expect(r.data.metadata).toMatchObject({ version: 2, destroyed: false, deletion_time: '' });
    const old = await vault.read('secret/data/nv/app?version=1');
    expect(old.data.data.pass).toBe('s3cret');

    expect((await vault.list('secret/metadata/nv')).data.keys).toEqual(['app']);
    expect((await vault.list('secret/metadata/')).data.keys).toContain('nv/');
    const meta = await vault.read('secret/metadata/nv/app');
    // Vault keeps oldest_version at 0 until versions are trimmed by max_versions.
    expect(meta.data).toMatchObject({ current_version: 2, oldest_version: 0 });
    expect(Object.keys(meta.data.versions).sort()).toEqual(['1', '2']);

    await vault.delete('secret/metadata/nv/app');
    const gone = await rejection(vault.read('secret/data/nv/app'));
    expect(gone.statusCode).toBe(404);
    expect((await rejection(vault.list('secret/metadata/nv'))).statusCode).toBe(404);
  });

  it('rejects a CAS mismatch with 400 and the error text', async () => {
    await vault.write('secret/data/nv/cas', { data: { a: '1' } });
    const e = await rejection(vault.write('secret/data/nv/cas', { data: { a: '2' }, options: { cas: 0 } }));
    expect(e.statusCode).toBe(400);
    expect(e.body.errors?.[0]).toMatch(/check-and-set/);
  });
});

describe('node-vault: tokens, policies, mounts, health, status', () => {
  it('creates a token (auth block) and looks it up; a default-policy token is denied transit with 403', async () => {
    const creator = nodeVault({ endpoint: d.tcp!, token: 'root' });
    const t = await creator.tokenCreate({ policies: ['default'], ttl: '1h', display_name: 'nv', meta: { app: 'x' } });
    expect(t.auth).toMatchObject({ renewable: true, lease_duration: 3600, orphan: false });
    expect(t.auth.client_token).toEqual(expect.any(String));
    expect(t.auth.accessor).toEqual(expect.any(String));
    expect(t.auth.policies).toEqual(['default']);
    expect(t.auth.metadata).toEqual({ app: 'x' });
    // node-vault adopts the created token (tokenSource), as Vault users expect.
    expect(creator.token).toBe(t.auth.client_token);

    const look = await vault.tokenLookup({ token: t.auth.client_token });
    expect(look.data).toMatchObject({
      id: t.auth.client_token,
      accessor: t.auth.accessor,
      display_name: 'token-nv',
      num_uses: 0,
      path: 'auth/token/create',
    });
    expect(look.data.policies).toEqual(['default']);
    expect(look.data.ttl).toBeGreaterThan(3500);
    const self = await creator.tokenLookupSelf();
    expect(self.data.id).toBe(t.auth.client_token);

    const denied = await rejection(creator.read('transit/keys/nv-aes'));
    expect(denied.statusCode).toBe(403);
    expect(denied.body.errors?.[0]).toMatch(/permission denied/);
  });

  it('adds, reads, lists and removes a policy through sys/policy, and the policy takes effect', async () => {
    await vault.addPolicy({
      name: 'nv-pol',
      rules: 'path "secret/data/nv/*" { capabilities = ["read", "create", "update"] }',
    });
    const p = await vault.getPolicy({ name: 'nv-pol' });
    expect(p.data.name).toBe('nv-pol');
    expect(p.data.rules).toContain('secret/data/nv/*');
    const all = await vault.policies();
    expect(all.data.policies).toEqual(expect.arrayContaining(['default', 'nv-pol', 'root']));
    expect(all.policies).toEqual(all.data.policies);

    const t = await nodeVault({ endpoint: d.tcp!, token: 'root' }).tokenCreate({ policies: ['nv-pol'] });
    const user = nodeVault({ endpoint: d.tcp!, token: t.auth.client_token });
    await user.write('secret/data/nv/by-policy', { data: { ok: 'yes' } });
    expect((await user.read('secret/data/nv/by-policy')).data.data.ok).toBe('yes');
    expect((await rejection(user.read('secret/data/other'))).statusCode).toBe(403);

    await vault.removePolicy({ name: 'nv-pol' });
    expect((await rejection(vault.getPolicy({ name: 'nv-pol' }))).statusCode).toBe(404);
  });

  it('lists mounts, mounts and unmounts an engine', async () => {
    const m = await vault.mounts();
    expect(m.data['transit/']).toMatchObject({ type: 'transit' });
    expect(m.data['secret/']).toMatchObject({ type: 'kv', options: { version: '2' } });
    expect(m['secret/'].accessor).toBe(m.data['secret/'].accessor);

    await vault.mount({ mount_point: 'nv-transit', type: 'transit', description: 'from node-vault' });
    const after = await vault.mounts();
    expect(after.data['nv-transit/']).toMatchObject({ type: 'transit', description: 'from node-vault' });
    await vault.write('nv-transit/keys/k', {});
    expect((await vault.list('nv-transit/keys')).data.keys).toEqual(['k']);

    await vault.unmount({ mount_point: 'nv-transit' });
    expect((await vault.mounts()).data['nv-transit/']).toBeUndefined();
  });

  it('lists auth methods (auths(): GET sys/auth) with the token method', async () => {
    const a = await vault.auths();
    expect(a.data['token/']).toMatchObject({ type: 'token', description: 'token based credentials' });
    expect(a['token/']).toEqual(a.data['token/']);
  });

  it('reads health (bare JSON) and seal status', async () => {
    const h = await vault.health();
    expect(h).toMatchObject({ initialized: true, sealed: false, standby: false });
    expect(typeof h.server_time_utc).toBe('number');
    expect(typeof h.version).toBe('string');
    expect(h.request_id).toBeUndefined();
    const s = await vault.status();
    expect(s).toMatchObject({ sealed: false, initialized: true, type: 'shamir', t: 1, n: 1, progress: 0 });
  });
});

describe('node-vault: init and unseal of a non-dev daemon', () => {
  it('initialises, and after a restart unseals with the returned key', async () => {
    const nd = await startDaemon({ tcp: true, dev: false, args: ['--keychain', 'none'] });
    let restarted: Daemon | undefined;
    try {
      const v = nodeVault({ endpoint: nd.tcp! });
      expect(await v.initialized()).toMatchObject({ initialized: false });
      // Not initialised: health answers 501 and node-vault still resolves with the body.
      expect(await v.health()).toMatchObject({ initialized: false, sealed: true });
      const init = await v.init({ secret_shares: 1, secret_threshold: 1 });
      expect(init.keys).toHaveLength(1);
      expect(init.keys_base64).toHaveLength(1);
      expect(init.root_token).toEqual(expect.any(String));
      expect(await v.initialized()).toMatchObject({ initialized: true });
      await nd.stop();

      restarted = await startDaemon({ tcp: true, dev: false, dir: nd.dir, args: ['--keychain', 'none'] });
      const v2 = nodeVault({ endpoint: restarted.tcp!, token: init.root_token });
      expect(await v2.status()).toMatchObject({ initialized: true, sealed: true });
      expect(await v2.health()).toMatchObject({ initialized: true, sealed: true });
      const sealedRead = await rejection(v2.read('sys/mounts'));
      expect(sealedRead.statusCode).toBe(503);
      expect(sealedRead.body.errors).toEqual(['Vault is sealed']);
      const un = await v2.unseal({ key: init.keys[0], reset: false });
      expect(un).toMatchObject({ sealed: false, initialized: true, t: 1, n: 1 });
      expect((await v2.tokenLookupSelf()).data.policies).toEqual(['root']);
    } finally {
      await restarted?.stop();
      await nd.stop();
      cleanup(nd.dir);
    }
  });
});
