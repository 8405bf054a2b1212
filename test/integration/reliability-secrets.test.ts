import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup, type Daemon } from '../support/daemon.js';
import { initialize, must, startFileDaemon } from '../support/crash-harness.js';

/** Unique markers, each a secret that must never appear in clear where it does not belong. */
const mark = (what: string) => `${what}-${randomBytes(9).toString('hex')}`;
const S = {
  plaintext: mark('PLAINTEXT'),
  cliPlaintext: mark('CLIPLAIN'),
  kv: mark('KVVALUE'),
  kvStdin: mark('KVSTDIN'),
  kvFile: mark('KVFILE'),
  errValue: mark('ERRVALUE'),
  awsSecret: mark('AWSSECRET'),
  hostToken: mark('HOSTTOKEN'),
};
const b64 = (s: string) => Buffer.from(s).toString('base64');

let d: Daemon;
let recovery = '';
let root = '';
let childToken = '';
let exported = '';
let datakey = '';
let auditFile = '';
const responses: string[] = [];
const cliErrors: string[] = [];

/** All the secret values and the encodings they could leak in. */
function forms(): Array<{ name: string; needle: Buffer }> {
  const out: Array<{ name: string; needle: Buffer }> = [];
  const add = (name: string, s: string) => {
    out.push({ name, needle: Buffer.from(s) });
    if (s.length >= 12) out.push({ name: `${name} (base64)`, needle: Buffer.from(b64(s)) });
  };
  for (const [k, v] of Object.entries(S)) add(k, v);
  add('root token', root);
  add('child token', childToken);
  add('recovery key', recovery);
  // Key material and data keys: as returned (base64), as raw bytes and as hex.
  for (const [name, v] of [
    ['exported key', exported],
    ['data key', datakey],
  ] as const) {
    out.push({ name, needle: Buffer.from(v) });
    const raw = Buffer.from(v, 'base64');
    out.push(
      { name: `${name} (raw)`, needle: raw },
      { name: `${name} (hex)`, needle: Buffer.from(raw.toString('hex')) },
    );
  }
  return out;
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    const st = statSync(p);
    return st.isDirectory() ? files(p) : st.isFile() ? [p] : [];
  });
}

beforeAll(async () => {
  d = await startFileDaemon(undefined, ['--log-level', 'debug']);
  const init = await initialize(d);
  recovery = init.key;
  root = init.root;
  await must(d, 'POST', 'sys/mounts/transit', { type: 'transit' });
  await must(d, 'POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } });
  auditFile = join(d.dir, 'audit.log');
  const en = await d.cli(['audit', 'enable', 'file', `path=${auditFile}`]);
  expect(en.exitCode, en.stderr).toBe(0);

  // Plaintext through the API and through the CLI (stdin).
  await must(d, 'POST', 'transit/keys/app', { exportable: true });
  const ct = (await must(d, 'POST', 'transit/encrypt/app', { plaintext: b64(S.plaintext) })).body.data.ciphertext;
  const back = await must(d, 'POST', 'transit/decrypt/app', { ciphertext: ct });
  expect(Buffer.from(back.body.data.plaintext, 'base64').toString()).toBe(S.plaintext);
  const enc = await d.cli(['transit', 'encrypt', 'app', '--field', 'ciphertext'], { input: S.cliPlaintext });
  expect(enc.exitCode, enc.stderr).toBe(0);
  const dec = await d.cli(['transit', 'decrypt', 'app', enc.stdout.trim()]);
  expect(dec.stdout).toBe(S.cliPlaintext);
  cliErrors.push(enc.stderr, dec.stderr);

  // KV values: API, CLI from stdin, CLI from @file.
  await must(d, 'POST', 'secret/data/app/db', { data: { password: S.kv, pin: 4242 } });
  const kvs = await d.cli(['kv', 'put', 'secret/app/stdin', 'password=-'], { input: S.kvStdin });
  expect(kvs.exitCode, kvs.stderr).toBe(0);
  const pwFile = join(d.dir, 'pw.txt');
  writeFileSync(pwFile, S.kvFile, { mode: 0o600 });
  const kvf = await d.cli(['kv', 'put', 'secret/app/file', `password=@${pwFile}`]);
  expect(kvf.exitCode, kvf.stderr).toBe(0);
  rmSync(pwFile);
  cliErrors.push(kvs.stderr, kvf.stderr);

  // Tokens: a child token, used once.
  const t = await must(d, 'POST', 'auth/token/create', { policies: ['default'], ttl: '1h' });
  childToken = t.body.auth.client_token;
  expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: childToken })).status).toBe(200);

  // Destination credentials (no association: nothing is sent anywhere).
  await must(d, 'POST', 'sys/sync/destinations/provider-a-sm/leak', {
    access_key_id: 'AKIDEXAMPLE',
    secret_access_key: S.awsSecret,
    region: 'us-east-1',
  });
  await must(d, 'POST', 'sys/sync/destinations/hosting-project/leak', {
    access_token: S.hostToken,
    project_id: 'prj_x',
    deployment_environments: ['production'],
  });
  const dest = await must(d, 'GET', 'sys/sync/destinations/provider-a-sm/leak');
  responses.push(dest.text);

  // Key export and a plaintext data key.
  exported = (await must(d, 'GET', 'transit/export/encryption-key/app/1')).body.data.keys['1'];
  datakey = (await must(d, 'POST', 'transit/datakey/plaintext/app', {})).body.data.plaintext;

  // Errors carrying secrets in the wrong place.
  for (const [p, body] of [
    ['secret/data/app/err', { data: S.errValue }],
    ['transit/encrypt/app', { plaintext: S.errValue + '!!' }],
    ['transit/encrypt/app', { plaintext: b64(S.plaintext), key_version: S.errValue }],
    ['transit/keys/app/config', { deletion_allowed: S.errValue }],
    ['auth/token/create', { ttl: S.errValue }],
    ['sys/sync/destinations/provider-a-sm/leak2', { secret_access_key: { nested: S.errValue } }],
  ] as const) {
    const r = await d.req('POST', p, body);
    expect({ p, status: r.status }).toEqual({ p, status: 400 });
    responses.push(r.text);
  }
  const badCli = await d.cli(['kv', 'put', 'nomount/x', 'password=-'], { input: S.errValue });
  expect(badCli.exitCode).not.toBe(0);
  cliErrors.push(badCli.stderr, badCli.stdout);

  // Seal and unseal through the CLI (recovery key on stdin).
  await must(d, 'POST', 'sys/seal');
  const un = await d.cli(['operator', 'unseal'], { input: recovery + '\n', token: null });
  expect(un.exitCode, un.stderr).toBe(0);
  cliErrors.push(un.stderr);
});

afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

describe('secrets stay secret (debug logging on, audit device on)', () => {
  it('the daemon log (debug level) holds none of the secrets', () => {
    const log = Buffer.from(d.output());
    expect(log.length).toBeGreaterThan(0);
    for (const f of forms())
      expect({ secret: f.name, found: log.includes(f.needle) }).toEqual({ secret: f.name, found: false });
  });

  it('the audit log holds none of the secrets outside the HMACs, and every request is in it, hashed', async () => {
    const text = readFileSync(auditFile, 'utf8');
    const outside = Buffer.from(text.replace(/hmac-sha256:[0-9a-f]{64}/g, ''));
    for (const f of forms())
      expect({ secret: f.name, found: outside.includes(f.needle) }).toEqual({ secret: f.name, found: false });
    // The values were logged (hashed): sys/audit-hash finds them.
    for (const v of [b64(S.plaintext), S.kv, childToken, root, S.awsSecret, exported]) {
      const h = (await must(d, 'POST', 'sys/audit-hash/file', { input: v })).body.data.hash;
      expect(text).toContain(h);
    }
    // A numeric KV value is hashed too (it sits under the sensitive "data").
    const h4242 = (await must(d, 'POST', 'sys/audit-hash/file', { input: '4242' })).body.data.hash;
    expect(text).toContain(h4242);
    expect(text).not.toMatch(/"pin":4242/);
    expect(statSync(auditFile).mode & 0o777).toBe(0o600);
  });

  it('the storage directory holds none of the secrets, in any encoding', () => {
    const all = files(join(d.dir, 'data'));
    // The log holds every record (key paths and values) in segment files.
    expect(all.some((f) => f.endsWith('.seg'))).toBe(true);
    for (const p of all) {
      const buf = readFileSync(p);
      for (const f of forms())
        expect({ file: p, secret: f.name, found: buf.includes(f.needle) }).toEqual({
          file: p,
          secret: f.name,
          found: false,
        });
    }
  });

  it('error messages and destination reads hold none of the secrets', () => {
    const joined = Buffer.from(responses.join('\n'));
    for (const f of forms())
      expect({ secret: f.name, found: joined.includes(f.needle) }).toEqual({ secret: f.name, found: false });
  });

  it('the CLI takes secrets from stdin or @file and echoes none of them on stderr or in errors', () => {
    const joined = Buffer.from(cliErrors.join('\n'));
    for (const f of forms())
      expect({ secret: f.name, found: joined.includes(f.needle) }).toEqual({ secret: f.name, found: false });
  });

  it('creates the socket 0600 and storage files 0600 in folders 0700', () => {
    expect(statSync(d.socket).mode & 0o777).toBe(0o600);
    const walk = (dir: string): void => {
      for (const n of readdirSync(dir)) {
        const p = join(dir, n);
        const st = statSync(p);
        expect({ p, mode: st.mode & 0o777 }).toEqual({ p, mode: st.isDirectory() ? 0o700 : 0o600 });
        if (st.isDirectory()) walk(p);
      }
    };
    expect(statSync(join(d.dir, 'data')).mode & 0o777).toBe(0o700);
    walk(join(d.dir, 'data'));
  });
});

describe('tokens: root tokens can be revoked, tokens expire', () => {
  it('a second root token works until revoked, then gets 403', async () => {
    const t = (await must(d, 'POST', 'auth/token/create', { policies: ['root'] })).body.auth.client_token as string;
    expect((await d.req('GET', 'sys/mounts', undefined, { token: t })).status).toBe(200);
    expect((await d.req('POST', 'auth/token/revoke', { token: t })).status).toBe(204);
    expect((await d.req('GET', 'sys/mounts', undefined, { token: t })).status).toBe(403);
  });

  it('a token with a 1s TTL stops working once expired', { timeout: 30_000 }, async () => {
    const t = (await must(d, 'POST', 'auth/token/create', { policies: ['default'], ttl: '1s' })).body.auth
      .client_token as string;
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(200);
    let status = 200;
    for (let i = 0; i < 100 && status === 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await d.req('GET', 'auth/token/lookup-self', undefined, { token: t })).status;
    }
    expect(status).toBe(403);
  });

  it('the initial root token can revoke itself; afterwards it is refused', async () => {
    expect((await d.req('POST', 'auth/token/revoke-self')).status).toBe(204);
    expect((await d.req('GET', 'sys/mounts')).status).toBe(403);
  });
});
