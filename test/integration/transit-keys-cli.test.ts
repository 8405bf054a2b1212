/**
 * `keyhold transit keys ...` and `keyhold transit import` against the real daemon: every key command,
 * output formats, stdout/--output for backups and exports, stdin/@file for secrets, exit codes
 * (0 ok, 1 local/usage error, 2 server error) with the cause on stderr.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDecipheriv, generateKeyPairSync, randomBytes, verify, webcrypto } from 'node:crypto';
import { cleanup, startDaemon, type Answer, type Daemon } from '../support/daemon.js';
import { loadX509 } from '../unit/transit-keys/helpers.js';

let d: Daemon;
let tmp: string;
beforeAll(async () => {
  d = await startDaemon({ dev: true });
  tmp = mkdtempSync(join(tmpdir(), 'keyhold-cli-keys-'));
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
  rmSync(tmp, { recursive: true, force: true });
});

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
function ok(r: Answer, status = 200): Answer {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}
async function run(args: string[], input?: string | Buffer) {
  const r = await d.cli(args, { input });
  return r;
}
async function must(args: string[], input?: string | Buffer) {
  const r = await run(args, input);
  if (r.exitCode !== 0) throw new Error(`keyhold ${args.join(' ')} -> ${r.exitCode}: ${r.stderr}`);
  return r;
}

describe('keyhold transit keys: lifecycle', () => {
  test('create prints the key; read --field and --format json; list', async () => {
    const c = await must(['transit', 'keys', 'create', 'cli-ed', '--type', 'ed25519', '--exportable', 'true']);
    expect(c.stdout).toMatch(/type\s+ed25519/);
    expect((await must(['transit', 'keys', 'read', 'cli-ed', '--field', 'type'])).stdout).toBe('ed25519');
    const json = JSON.parse((await must(['transit', 'keys', 'read', 'cli-ed', '--format', 'json'])).stdout);
    expect(json.keys['1'].public_key).toHaveLength(44);
    await must(['transit', 'keys', 'create', 'cli-aes']);
    const list = JSON.parse((await must(['transit', 'keys', 'list', '--format', 'json'])).stdout);
    expect(list.keys).toEqual(expect.arrayContaining(['cli-aes', 'cli-ed']));
  });

  test("create validates with exit 2 and the server's reason on stderr", async () => {
    const r = await run(['transit', 'keys', 'create', 'bad', '--type', 'hmac', '--key-size', '8']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('key_size');
  });

  test('config, rotate, trim and delete', async () => {
    await must(['transit', 'keys', 'create', 'cli-life']);
    for (let i = 0; i < 3; i++) await must(['transit', 'keys', 'rotate', 'cli-life']);
    expect((await must(['transit', 'keys', 'read', 'cli-life', '--field', 'latest_version'])).stdout).toBe('4');
    const refused = await run(['transit', 'keys', 'delete', 'cli-life']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('deletion is not allowed for this key');
    await must([
      'transit',
      'keys',
      'config',
      'cli-life',
      '--min-decryption-version',
      '3',
      '--min-encryption-version',
      '3',
      '--deletion-allowed',
      'true',
    ]);
    const t = JSON.parse(
      (await must(['transit', 'keys', 'trim', 'cli-life', '--min-available-version', '3', '--format', 'json'])).stdout,
    );
    expect(t.min_available_version).toBe(3);
    const del = await must(['transit', 'keys', 'delete', 'cli-life']);
    expect(del.stderr).toContain('Deleted key cli-life');
    expect((await run(['transit', 'keys', 'read', 'cli-life'])).exitCode).toBe(2);
  });

  test('config-keys and cache-config', async () => {
    expect(
      JSON.parse((await must(['transit', 'config-keys', '--disable-upsert', 'true', '--format', 'json'])).stdout),
    ).toEqual({ disable_upsert: true });
    await must(['transit', 'config-keys', '--disable-upsert', 'false']);
    expect((await must(['transit', 'cache-config', '--size', '50', '--field', 'size'])).stdout).toBe('50');
    const bad = await run(['transit', 'cache-config', '--size', '3']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('size must be 0 or a value greater or equal to 10');
  });
});

describe('keyhold transit keys: material in and out', () => {
  test('export prints JSON or writes --output with mode 0600', async () => {
    const out = JSON.parse(
      (await must(['transit', 'keys', 'export', 'signing-key', 'cli-ed', 'latest', '--format', 'json'])).stdout,
    );
    expect(Buffer.from(out.keys['1'], 'base64')).toHaveLength(64);
    const file = join(tmp, 'export.json');
    const r = await must(['transit', 'keys', 'export', 'public-key', 'cli-ed', '--output', file]);
    expect(r.stdout).toBe('');
    expect(JSON.parse(readFileSync(file, 'utf8')).keys['1']).toHaveLength(44);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const refused = await run(['transit', 'keys', 'export', 'encryption-key', 'cli-aes']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('not exportable');
  });

  test('backup to stdout restores from stdin; a second restore needs --force; --backup @file works', async () => {
    await must(['transit', 'keys', 'create', 'cli-bk', '--exportable', 'true', '--allow-plaintext-backup', 'true']);
    const ct = ok(await d.req('POST', 'transit/encrypt/cli-bk', { plaintext: b64('cli') })).body.data.ciphertext;
    const backup = (await must(['transit', 'keys', 'backup', 'cli-bk'])).stdout;
    expect(backup.trim()).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const restored = await must(['transit', 'keys', 'restore', 'cli-bk2'], backup);
    expect(restored.stderr).toContain('Restored key cli-bk2');
    expect(
      Buffer.from(
        ok(await d.req('POST', 'transit/decrypt/cli-bk2', { ciphertext: ct })).body.data.plaintext,
        'base64',
      ).toString(),
    ).toBe('cli');
    const again = await run(['transit', 'keys', 'restore', 'cli-bk2'], backup);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain('already exists');
    const file = join(tmp, 'cli-bk.backup');
    await must(['transit', 'keys', 'backup', 'cli-bk', '--output', file]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await must(['transit', 'keys', 'restore', 'cli-bk2', '--backup', '@' + file, '--force']);
  });

  test('restore refuses a backup given in argv (exit 1) and an empty stdin', async () => {
    const r = await run(['transit', 'keys', 'restore', 'x', '--backup', 'eyJwb2xpY3kiOnt9fQ==']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('@file');
    const empty = await run(['transit', 'keys', 'restore', 'x'], '');
    expect(empty.exitCode).toBe(1);
  });

  test('wrapping-key prints the PEM', async () => {
    const r = await must(['transit', 'keys', 'wrapping-key']);
    // (execa strips the final newline the CLI writes)
    expect(r.stdout).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+-----END PUBLIC KEY-----$/);
  });

  test('transit import wraps a raw AES key client-side; ciphertexts decrypt with the original key', async () => {
    const key = randomBytes(32);
    const file = join(tmp, 'aes.key');
    writeFileSync(file, key);
    const r = await must([
      'transit',
      'import',
      'cli-imp',
      '--file',
      file,
      '--type',
      'aes256-gcm96',
      '--allow-rotation',
      '--exportable',
    ]);
    expect(r.stderr).toContain('Imported key cli-imp');
    const k = ok(await d.req('GET', 'transit/keys/cli-imp')).body.data;
    expect([k.imported_key, k.imported_key_allow_rotation, k.exportable]).toEqual([true, true, true]);
    const ct = ok(await d.req('POST', 'transit/encrypt/cli-imp', { plaintext: b64('mine') })).body.data
      .ciphertext as string;
    const raw = Buffer.from(ct.split(':')[2]!, 'base64');
    const dc = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    dc.setAuthTag(raw.subarray(raw.length - 16));
    expect(Buffer.concat([dc.update(raw.subarray(12, raw.length - 16)), dc.final()]).toString()).toBe('mine');
    // A second version from base64 text on stdin, with another OAEP hash.
    const v2 = randomBytes(32);
    await must(
      ['transit', 'import-version', 'cli-imp', '--file', '-', '--base64', '--hash-function', 'SHA512'],
      b64(v2) + '\n',
    );
    expect(ok(await d.req('GET', 'transit/export/encryption-key/cli-imp/2')).body.data.keys['2']).toBe(b64(v2));
  });

  test('transit import takes PEM private keys (PKCS#1/SEC 1/PKCS#8) and PEM public keys', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const sec1 = join(tmp, 'ec.pem');
    writeFileSync(sec1, ec.privateKey.export({ format: 'pem', type: 'sec1' }));
    await must(['transit', 'import', 'cli-ec', '--file', sec1, '--type', 'ecdsa-p384']);
    const sig = ok(await d.req('POST', 'transit/sign/cli-ec', { input: b64('pem') })).body.data.signature as string;
    expect(verify('sha256', Buffer.from('pem'), ec.publicKey, Buffer.from(sig.split(':')[2]!, 'base64'))).toBe(true);

    const ed = generateKeyPairSync('ed25519');
    const pub = join(tmp, 'ed-pub.pem');
    writeFileSync(pub, ed.publicKey.export({ format: 'pem', type: 'spki' }));
    const r = await must(['transit', 'import', 'cli-edpub', '--file', pub, '--type', 'ed25519']);
    expect(r.stderr).toContain('public key only');
    const priv = join(tmp, 'ed.pem');
    writeFileSync(priv, ed.privateKey.export({ format: 'pem', type: 'pkcs8' }));
    await must(['transit', 'import-version', 'cli-edpub', '--file', priv]);
    const s = ok(await d.req('POST', 'transit/sign/cli-edpub', { input: b64('done') })).body.data.signature as string;
    expect(verify(null, Buffer.from('done'), ed.publicKey, Buffer.from(s.split(':')[2]!, 'base64'))).toBe(true);
  });

  test('transit import usage errors exit 1; server refusals exit 2', async () => {
    const file = join(tmp, 'k16');
    writeFileSync(file, randomBytes(16));
    const unknown = await run(['transit', 'import', 'x', '--file', file, '--type', 'des']);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain('unknown key type');
    const missing = await run(['transit', 'import', 'x', '--file', join(tmp, 'nope')]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('cannot read');
    const hash = await run(['transit', 'import', 'x', '--file', file, '--hash-function', 'MD5']);
    expect(hash.exitCode).toBe(1);
    const size = await run(['transit', 'import', 'x', '--file', file, '--type', 'aes256-gcm96']);
    expect(size.exitCode).toBe(2);
    expect(size.stderr).toContain('invalid key size 16 bytes');
    const rsa = join(tmp, 'rsa.pem');
    writeFileSync(
      rsa,
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs1' }),
    );
    const wrongType = await run(['transit', 'import', 'y', '--file', rsa, '--type', 'rsa-3072']);
    expect(wrongType.exitCode).toBe(2);
    expect(wrongType.stderr).toContain('expected 384 bytes, got 256 bytes');
  });

  test('byok-export wraps for another key', async () => {
    const wrap = (await must(['transit', 'keys', 'wrapping-key', '--mount', 'transit'])).stdout;
    const pem = join(tmp, 'wrap.pem');
    writeFileSync(pem, wrap);
    await must(['transit', 'import', 'self-wrap', '--file', pem, '--type', 'rsa-4096']);
    const out = JSON.parse(
      (await must(['transit', 'keys', 'byok-export', 'self-wrap', 'cli-bk', 'latest', '--format', 'json'])).stdout,
    );
    expect(Object.keys(out.keys)).toEqual(['1']);
    // It imports back into this mount (the wrapping key is the destination) with the same key bytes.
    ok(await d.req('POST', 'transit/keys/cli-bk-copy/import', { ciphertext: out.keys['1'], exportable: true }), 204);
    const a = ok(await d.req('GET', 'transit/export/encryption-key/cli-bk/1')).body.data.keys['1'];
    expect(ok(await d.req('GET', 'transit/export/encryption-key/cli-bk-copy/1')).body.data.keys['1']).toBe(a);
  });

  test('csr and set-certificate', async () => {
    const x509 = await loadX509();
    await must(['transit', 'keys', 'create', 'cli-cert', '--type', 'ecdsa-p256']);
    const csrPem = (await must(['transit', 'keys', 'csr', 'cli-cert', '--field', 'csr'])).stdout;
    const csr = new x509.Pkcs10CertificateRequest(csrPem);
    expect(await csr.verify()).toBe(true);
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const ca = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber: '0a',
      subject: 'CN=cli-cert',
      issuer: 'CN=cli CA',
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 86_400_000),
      signingAlgorithm: alg,
      publicKey: csr.publicKey,
      signingKey: ca.privateKey,
    });
    const chain = join(tmp, 'chain.pem');
    writeFileSync(chain, leaf.toString('pem'));
    const r = await must(['transit', 'keys', 'set-certificate', 'cli-cert', '--certificate-chain', '@' + chain]);
    expect(r.stderr).toContain('Success');
    const shown = JSON.parse(
      (await must(['transit', 'keys', 'export', 'certificate-chain', 'cli-cert', '1', '--format', 'json'])).stdout,
    );
    expect(shown.keys['1']).toBe(leaf.toString('pem').trim());
  });

  test('help lists the key commands and the import helper', async () => {
    const keys = (await run(['transit', 'keys', '--help'])).stdout;
    for (const c of [
      'create',
      'read',
      'list',
      'delete',
      'config',
      'rotate',
      'trim',
      'export',
      'backup',
      'restore',
      'wrapping-key',
      'csr',
      'set-certificate',
      'byok-export',
    ])
      expect(keys).toContain(`  ${c} `);
    expect((await run(['transit', '--help'])).stdout).toMatch(/import \[options\] <name>/);
  });
});
