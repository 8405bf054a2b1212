/**
 * Key material in and out through the real router and core (test/support/harness.ts): export (error 10),
 * backup/restore in Vault format (error 6, vector 6), known-answer vectors loaded by restore (1, 3, 4),
 * BYOK import built in the test with node:crypto and @noble (all types, vector 5), import_version and
 * its refusals (error 8), byok-export between mounts, CSR and set-certificate checked with an
 * independent X.509 library.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import {
  constants,
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  publicEncrypt,
  randomBytes,
  sign,
  verify,
  webcrypto,
  type KeyObject,
} from 'node:crypto';
import { aeskwp } from '@noble/ciphers/aes.js';
import { cleanup, startHarness, type Answer, type Harness } from '../../support/harness.js';
import { loadX509 } from '../transit-keys/helpers.js';
import { vaultBackup } from '../transit-keys/vault-backup-builder.js';

const vec6 = JSON.parse(readFileSync('test/vectors/vault-docs-backup-aes.json', 'utf8'));
const vectors = JSON.parse(readFileSync('test/vectors/vault-sign-hmac-vectors.json', 'utf8'));
const fixtures = JSON.parse(readFileSync('test/vectors/vault-import-fixtures.json', 'utf8'));

let d: Harness;
let wrapPub: KeyObject;
beforeAll(async () => {
  d = await startHarness();
  wrapPub = createPublicKey(ok(await d.req('GET', 'transit/wrapping_key')).body.data.public_key);
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const err = (r: Answer) => (r.body?.errors ?? []).join('; ');
function ok(r: Answer, status = 200): Answer {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}

/** An import ciphertext built independently of keyhold: node RSA-OAEP + (node or @noble) AES-KWP. */
function importBlob(material: Buffer, opts: { hash?: string; noble?: boolean; pub?: KeyObject } = {}): string {
  const eph = randomBytes(32);
  const rsa = publicEncrypt(
    { key: opts.pub ?? wrapPub, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: opts.hash ?? 'sha256' },
    eph,
  );
  let wrapped: Buffer;
  if (opts.noble) wrapped = Buffer.from(aeskwp(eph).encrypt(material));
  else {
    const c = createCipheriv('id-aes256-wrap-pad', eph, Buffer.from('A65959A6', 'hex'));
    wrapped = Buffer.concat([c.update(material), c.final()]);
  }
  return Buffer.concat([rsa, wrapped]).toString('base64');
}

function gcmDecrypt(key: Buffer, ciphertext: string): string {
  const raw = Buffer.from(ciphertext.split(':')[2]!, 'base64');
  const dc = createDecipheriv(key.length === 16 ? 'aes-128-gcm' : 'aes-256-gcm', key, raw.subarray(0, 12));
  dc.setAuthTag(raw.subarray(raw.length - 16));
  return Buffer.concat([dc.update(raw.subarray(12, raw.length - 16)), dc.final()]).toString();
}

describe('export (spec error 10)', () => {
  beforeAll(async () => {
    ok(await d.req('POST', 'transit/keys/secret-k', {}));
    ok(await d.req('POST', 'transit/keys/ex', { exportable: true }));
    ok(await d.req('POST', 'transit/keys/ex/rotate'));
    ok(await d.req('POST', 'transit/keys/ex-ec', { type: 'ecdsa-p256', exportable: true }));
    ok(await d.req('POST', 'transit/keys/ex-rsa', { type: 'rsa-2048', exportable: true }));
  });

  test('refuses private material of a non-exportable key, naming exportable; public keys stay exportable', async () => {
    for (const kind of ['encryption-key', 'hmac-key']) {
      const r = await d.req('GET', `transit/export/${kind}/secret-k`);
      expect(r.status).toBe(400);
      expect(err(r)).toBe('exportable: private key material is not exportable');
    }
    ok(await d.req('POST', 'transit/keys/pub-only-export', { type: 'ed25519' }));
    expect(Object.keys(ok(await d.req('GET', 'transit/export/public-key/pub-only-export')).body.data.keys)).toEqual([
      '1',
    ]);
  });

  test('selects all live versions, "latest", "N" and "vN"; refuses bad or invalid versions', async () => {
    const all = ok(await d.req('GET', 'transit/export/encryption-key/ex')).body.data;
    expect(all).toMatchObject({ name: 'ex', type: 'aes256-gcm96' });
    expect(Object.keys(all.keys)).toEqual(['1', '2']);
    expect(ok(await d.req('GET', 'transit/export/encryption-key/ex/latest')).body.data.keys).toEqual({
      2: all.keys['2'],
    });
    expect(ok(await d.req('GET', 'transit/export/encryption-key/ex/v1')).body.data.keys).toEqual({ 1: all.keys['1'] });
    const nan = await d.req('GET', 'transit/export/encryption-key/ex/first');
    expect(nan.status).toBe(400);
    expect(err(nan)).toBe('version: invalid key version');
    const none = await d.req('GET', 'transit/export/encryption-key/ex/9');
    expect(err(none)).toBe('version: version does not exist or cannot be found');
    ok(await d.req('POST', 'transit/keys/ex/config', { min_decryption_version: 2 }));
    const old = await d.req('GET', 'transit/export/encryption-key/ex/1');
    expect(old.status).toBe(400);
    expect(err(old)).toBe('version: version for export is below minimum decryption version');
    expect((await d.req('GET', 'transit/export/encryption-key/missing-key')).status).toBe(404);
    const kind = await d.req('GET', 'transit/export/private-key/ex');
    expect(err(kind)).toBe('key_type: invalid export type: private-key');
  });

  test('type mismatches name the reason', async () => {
    expect(err(await d.req('GET', 'transit/export/signing-key/ex'))).toContain('signing not supported for the key');
    expect(err(await d.req('GET', 'transit/export/encryption-key/ex-ec'))).toContain(
      'encryption not supported for the key',
    );
    expect(err(await d.req('GET', 'transit/export/certificate-chain/ex-ec'))).toContain(
      'does not have a certificate chain',
    );
  });

  test('encodings: EC as SEC 1 PEM (trimmed), RSA as PKCS#1 PEM, both loadable by node:crypto and matching the public key', async () => {
    const ec = ok(await d.req('GET', 'transit/export/signing-key/ex-ec/1')).body.data.keys['1'] as string;
    expect(ec.startsWith('-----BEGIN EC PRIVATE KEY-----')).toBe(true);
    expect(ec.endsWith('-----END EC PRIVATE KEY-----')).toBe(true);
    const ecPub = ok(await d.req('GET', 'transit/export/public-key/ex-ec/1')).body.data.keys['1'] as string;
    expect(createPublicKey(createPrivateKey(ec)).export({ format: 'pem', type: 'spki' })).toBe(ecPub + '\n');
    const rsa = ok(await d.req('GET', 'transit/export/encryption-key/ex-rsa/1')).body.data.keys['1'] as string;
    expect(rsa.startsWith('-----BEGIN RSA PRIVATE KEY-----')).toBe(true);
    expect(rsa.endsWith('-----END RSA PRIVATE KEY-----\n')).toBe(true);
    expect(ok(await d.req('GET', 'transit/export/signing-key/ex-rsa/1')).body.data.keys['1']).toBe(rsa);
  });
});

describe('backup and restore (Vault format, spec error 6)', () => {
  test('restores the Vault docs backup sample (vector 6); export returns the same key bytes', async () => {
    ok(await d.req('POST', 'transit/restore', { backup: vec6.backup }), 204);
    const k = ok(await d.req('GET', 'transit/keys/aes')).body.data;
    expect(k).toMatchObject({ name: 'aes', type: 'aes256-gcm96', latest_version: 1, keys: { 1: 1512751808 } });
    expect(k.restore_info.version).toBe(1);
    expect(ok(await d.req('POST', 'transit/keys/aes/config', { exportable: true })).body.data.exportable).toBe(true);
    expect(ok(await d.req('GET', 'transit/export/encryption-key/aes/1')).body.data.keys['1']).toBe(vec6.key_v1);
    expect(ok(await d.req('GET', 'transit/export/hmac-key/aes/1')).body.data.keys['1']).toBe(vec6.hmac_key_v1);
    // The restored key encrypts; node:crypto decrypts with the documented key bytes.
    const ct = ok(await d.req('POST', 'transit/encrypt/aes', { plaintext: b64('from the docs') })).body.data.ciphertext;
    expect(gcmDecrypt(Buffer.from(vec6.key_v1, 'base64'), ct)).toBe('from the docs');
  });

  test('refuses to restore over an existing name without force (error 6), then force overwrites', async () => {
    const r = await d.req('POST', 'transit/restore/aes', { backup: vec6.backup });
    expect(r.status).toBe(400);
    expect(err(r)).toContain('key "aes" already exists');
    expect(err(r)).toContain('force');
    ok(await d.req('POST', 'transit/keys/aes/rotate'));
    ok(await d.req('POST', 'transit/restore/aes', { backup: vec6.backup, force: true }), 204);
    expect(ok(await d.req('GET', 'transit/keys/aes')).body.data.latest_version).toBe(1);
  });

  test('backup needs exportable and allow_plaintext_backup', async () => {
    ok(await d.req('POST', 'transit/keys/nb', {}));
    expect(err(await d.req('GET', 'transit/backup/nb'))).toBe('exportable: exporting is disallowed on the policy');
    ok(await d.req('POST', 'transit/keys/nb/config', { exportable: true }));
    expect(err(await d.req('GET', 'transit/backup/nb'))).toBe(
      'allow_plaintext_backup: plaintext backup is disallowed on the policy',
    );
    expect((await d.req('GET', 'transit/backup/absent')).status).toBe(404);
  });

  test.each(['aes256-gcm96', 'chacha20-poly1305', 'xchacha20-poly1305', 'ed25519', 'ecdsa-p384', 'rsa-2048', 'hmac'])(
    '%s: a backup restores under another name with every version, setting and HMAC key; old outputs stay valid',
    async (t) => {
      const name = `bk-${t}`;
      ok(await d.req('POST', `transit/keys/${name}`, { type: t, exportable: true, allow_plaintext_backup: true }));
      ok(await d.req('POST', `transit/keys/${name}/rotate`));
      ok(
        await d.req('POST', `transit/keys/${name}/config`, {
          min_decryption_version: 1,
          deletion_allowed: true,
          auto_rotate_period: '48h',
        }),
      );
      const hmac = ok(await d.req('POST', `transit/hmac/${name}`, { input: b64('data') })).body.data.hmac;
      const backup = ok(await d.req('GET', `transit/backup/${name}`)).body.data.backup as string;
      expect(ok(await d.req('GET', `transit/keys/${name}`)).body.data.backup_info.version).toBe(2);
      ok(await d.req('POST', `transit/restore/${name}-copy`, { backup }), 204);
      const a = ok(await d.req('GET', `transit/keys/${name}`)).body.data;
      const b = ok(await d.req('GET', `transit/keys/${name}-copy`)).body.data;
      for (const f of [
        'type',
        'latest_version',
        'deletion_allowed',
        'exportable',
        'allow_plaintext_backup',
        'auto_rotate_period',
        'keys',
        'key_size',
      ])
        expect(b[f]).toEqual(a[f]);
      const hk = (n: string) => d.req('GET', `transit/export/hmac-key/${n}`).then((r) => ok(r).body.data.keys);
      expect(await hk(`${name}-copy`)).toEqual(await hk(name));
      expect(ok(await d.req('POST', `transit/verify/${name}-copy`, { input: b64('data'), hmac })).body.data.valid).toBe(
        true,
      );
      if (t === 'aes256-gcm96' || t.includes('chacha')) {
        const ct = ok(await d.req('POST', `transit/encrypt/${name}`, { plaintext: b64('secret') })).body.data
          .ciphertext;
        expect(
          Buffer.from(
            ok(await d.req('POST', `transit/decrypt/${name}-copy`, { ciphertext: ct })).body.data.plaintext,
            'base64',
          ).toString(),
        ).toBe('secret');
      }
      if (['ed25519', 'ecdsa-p384', 'rsa-2048'].includes(t)) {
        const s = ok(await d.req('POST', `transit/sign/${name}`, { input: b64('msg') })).body.data.signature;
        expect(
          ok(await d.req('POST', `transit/verify/${name}-copy`, { input: b64('msg'), signature: s })).body.data.valid,
        ).toBe(true);
      }
    },
  );

  test('refuses a malformed backup with 400 naming backup', async () => {
    const r = await d.req('POST', 'transit/restore/junk', { backup: b64('{"policy":') });
    expect(r.status).toBe(400);
    expect(err(r)).toMatch(/^backup: /);
    expect(err(await d.req('POST', 'transit/restore', {}))).toContain('backup');
    expect(err(await d.req('POST', 'transit/restore', { backup: vec6.backup, name: 'a/b' }))).toContain(
      'key names cannot be paths',
    );
  });
});

describe('known-answer vectors loaded by restore (reference section 10)', () => {
  test('HMAC vector 1: every hash of "the quick brown fox" under the fixture keys, v1 and v2', async () => {
    const h = vectors.hmac;
    const backup = vaultBackup('kat-hmac', 0, [
      { key: b64(randomBytes(32)), hmac_key: b64(h.hmac_key_v1_ascii) },
      { key: b64(randomBytes(32)), hmac_key: b64(h.hmac_key_v2_ascii) },
    ]);
    ok(await d.req('POST', 'transit/restore', { backup }), 204);
    for (const [alg, want] of Object.entries(h.v1)) {
      expect(
        ok(await d.req('POST', `transit/hmac/kat-hmac/${alg}`, { input: vectors.input_b64, key_version: 1 })).body.data
          .hmac,
      ).toBe(want);
    }
    expect(ok(await d.req('POST', 'transit/hmac/kat-hmac', { input: vectors.input_b64 })).body.data.hmac).toBe(
      h['v2_sha2-256'],
    );
  });

  test.each(vectors.ecdsa)(
    "ECDSA vectors 3/4: $type fixture key verifies Vault's signature",
    async (v: { type: string; x: string; y: string; d: string; signature: string }) => {
      const name = `kat-${v.type}`;
      ok(
        await d.req('POST', 'transit/restore', {
          backup: vaultBackup(name, v.type === 'ecdsa-p256' ? 1 : 6, [
            { key: null, hmac_key: b64(randomBytes(32)), ec: v },
          ]),
        }),
        204,
      );
      expect(
        ok(await d.req('POST', `transit/verify/${name}`, { input: vectors.input_b64, signature: v.signature })).body
          .data.valid,
      ).toBe(true);
      expect(
        ok(await d.req('POST', `transit/verify/${name}`, { input: b64('other'), signature: v.signature })).body.data
          .valid,
      ).toBe(false);
      // And the same key imported by public key alone (reference 10, option c) verifies too.
      const jwk = {
        kty: 'EC',
        crv: v.type === 'ecdsa-p256' ? 'P-256' : 'P-384',
        x: Buffer.from(v.x, 'hex').toString('base64url'),
        y: Buffer.from(v.y, 'hex').toString('base64url'),
      };
      const pem = String(createPublicKey({ key: jwk, format: 'jwk' }).export({ format: 'pem', type: 'spki' }));
      ok(await d.req('POST', `transit/keys/${name}-pub/import`, { type: v.type, public_key: pem }), 204);
      expect(
        ok(await d.req('POST', `transit/verify/${name}-pub`, { input: vectors.input_b64, signature: v.signature })).body
          .data.valid,
      ).toBe(true);
    },
  );
});

describe('BYOK import (reference 6)', () => {
  const asym: Record<string, () => KeyObject> = {
    ed25519: () => generateKeyPairSync('ed25519').privateKey,
    'ecdsa-p256': () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    'ecdsa-p384': () => generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey,
    'ecdsa-p521': () => generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey,
    'rsa-2048': () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
  };

  test.each([
    ['aes128-gcm96', 16, 'SHA256'],
    ['aes256-gcm96', 32, 'SHA1'],
    ['aes256-gcm96', 32, 'SHA512'],
    ['chacha20-poly1305', 32, 'SHA384'],
    ['xchacha20-poly1305', 32, 'SHA224'],
  ])(
    '%s (hash_function %s): ciphertexts of the imported key decrypt with the original key',
    async (t, size, hashName) => {
      const key = randomBytes(size as number);
      const name = `imp-${t}-${hashName}`;
      const hash = { SHA1: 'sha1', SHA224: 'sha224', SHA256: 'sha256', SHA384: 'sha384', SHA512: 'sha512' }[
        hashName as string
      ]!;
      ok(
        await d.req('POST', `transit/keys/${name}/import`, {
          type: t,
          hash_function: hashName,
          ciphertext: importBlob(key, { hash, noble: hashName !== 'SHA256' }),
        }),
        204,
      );
      const k = ok(await d.req('GET', `transit/keys/${name}`)).body.data;
      expect(k).toMatchObject({ imported_key: true, imported_key_allow_rotation: false, type: t });
      const ct = ok(await d.req('POST', `transit/encrypt/${name}`, { plaintext: b64('byok') })).body.data.ciphertext;
      if (t.startsWith('aes')) expect(gcmDecrypt(key, ct)).toBe('byok');
      else
        expect(
          Buffer.from(
            ok(await d.req('POST', `transit/decrypt/${name}`, { ciphertext: ct })).body.data.plaintext,
            'base64',
          ).toString(),
        ).toBe('byok');
    },
  );

  test('hmac keys import with their length as key_size; HMACs match node:crypto with the original key', async () => {
    const key = randomBytes(100);
    ok(await d.req('POST', 'transit/keys/imp-hmac/import', { type: 'hmac', ciphertext: importBlob(key) }), 204);
    expect(ok(await d.req('GET', 'transit/keys/imp-hmac')).body.data.key_size).toBe(100);
    const mac = ok(await d.req('POST', 'transit/hmac/imp-hmac', { input: b64('m') })).body.data.hmac as string;
    const { createHmac } = await import('node:crypto');
    expect(mac).toBe('vault:v1:' + createHmac('sha256', key).update('m').digest('base64'));
  });

  test.each(Object.keys(asym))('%s: PKCS#8 import signs so that the original public key verifies', async (t) => {
    const priv = asym[t]!();
    const name = `imp-${t}`;
    ok(
      await d.req('POST', `transit/keys/${name}/import`, {
        type: t,
        ciphertext: importBlob(Buffer.from(priv.export({ format: 'der', type: 'pkcs8' }))),
      }),
      204,
    );
    const s = ok(
      await d.req('POST', `transit/sign/${name}`, {
        input: b64('signed'),
        ...(t.startsWith('rsa') ? { signature_algorithm: 'pkcs1v15' } : {}),
      }),
    ).body.data.signature as string;
    const raw = Buffer.from(s.split(':')[2]!, 'base64');
    expect(verify(t === 'ed25519' ? null : 'sha256', Buffer.from('signed'), createPublicKey(priv), raw)).toBe(true);
  });

  test("imports Vault's NSS Ed25519 and RSASSA-PSS PKCS#8 fixtures (vector 5)", async () => {
    ok(
      await d.req('POST', 'transit/keys/nss-ed25519/import', {
        type: 'ed25519',
        ciphertext: importBlob(Buffer.from(fixtures.nss_ed25519_pkcs8, 'base64')),
      }),
      204,
    );
    ok(
      await d.req('POST', 'transit/keys/rsa-pss/import', {
        type: 'rsa-2048',
        ciphertext: importBlob(Buffer.from(fixtures.rsa_pss_pkcs8, 'base64')),
      }),
      204,
    );
    const s = ok(await d.req('POST', 'transit/sign/rsa-pss', { input: b64('x') })).body.data.signature as string;
    expect(ok(await d.req('POST', 'transit/verify/rsa-pss', { input: b64('x'), signature: s })).body.data.valid).toBe(
      true,
    );
    expect(ok(await d.req('GET', 'transit/keys/nss-ed25519')).body.data.keys['1'].public_key).toHaveLength(44);
  });

  test('import refusals name the cause', async () => {
    const key = importBlob(randomBytes(32));
    ok(await d.req('POST', 'transit/keys/exists', {}));
    const cases: [string, Record<string, unknown>, string][] = [
      ['exists', { ciphertext: key }, 'the import path cannot be used with an existing key'],
      [
        'r1',
        { ciphertext: key, convergent_encryption: true },
        'convergent_encryption: import cannot be used on keys with convergent encryption enabled',
      ],
      [
        'r2',
        { ciphertext: key, auto_rotate_period: '2h' },
        'allow_rotation: allow_rotation must be set to true if auto-rotation is enabled',
      ],
      ['r3', { ciphertext: key, hash_function: 'SHA-256' }, 'hash_function: unknown hash function: SHA-256'],
      ['r4', { ciphertext: b64('short'), type: 'aes256-gcm96' }, 'ciphertext: provided ciphertext is too short'],
      ['r5', { ciphertext: 'not base64!' }, 'ciphertext: must be valid base64'],
      ['r6', { ciphertext: key, type: 'aes128-gcm96' }, 'invalid key size 32 bytes for key type aes128-gcm96'],
      [
        'r7',
        {
          public_key: String(generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' })),
          type: 'aes256-gcm96',
        },
        'provided type does not support public_key import',
      ],
      ['r8', { ciphertext: importBlob(randomBytes(32), { hash: 'sha1' }) }, 'failed to decrypt the ephemeral AES key'],
      ['r9', {}, 'ciphertext or public_key'],
      ['r10', { ciphertext: key, type: 'managed_key' }, 'managed'],
    ];
    for (const [name, body, text] of cases) {
      const r = await d.req('POST', `transit/keys/${name}/import`, body);
      expect(r.status, `${name}: ${r.text}`).toBe(400);
      expect(err(r)).toContain(text);
    }
  });

  test('imported keys rotate only with allow_rotation; after rotation import_version is refused (error 8)', async () => {
    ok(await d.req('POST', 'transit/keys/no-rot/import', { ciphertext: importBlob(randomBytes(32)) }), 204);
    const refused = await d.req('POST', 'transit/keys/no-rot/rotate');
    expect(refused.status).toBe(400);
    expect(err(refused)).toContain('imported key no-rot does not allow rotation');
    expect(err(refused)).toContain('allow_rotation');

    ok(
      await d.req('POST', 'transit/keys/may-rot/import', {
        ciphertext: importBlob(randomBytes(32)),
        allow_rotation: true,
      }),
      204,
    );
    ok(await d.req('POST', 'transit/keys/may-rot/import_version', { ciphertext: importBlob(randomBytes(32)) }), 204);
    expect(ok(await d.req('GET', 'transit/keys/may-rot')).body.data.latest_version).toBe(2);
    const rotated = ok(await d.req('POST', 'transit/keys/may-rot/rotate')).body.data;
    expect([rotated.latest_version, rotated.imported_key]).toEqual([3, false]);
    const after = await d.req('POST', 'transit/keys/may-rot/import_version', {
      ciphertext: importBlob(randomBytes(32)),
    });
    expect(after.status).toBe(400);
    expect(err(after)).toContain('import_version endpoint can only be used with an imported key');

    ok(await d.req('POST', 'transit/keys/generated', {}));
    const gen = await d.req('POST', 'transit/keys/generated/import_version', {
      ciphertext: importBlob(randomBytes(32)),
    });
    expect(gen.status).toBe(400);
    expect(err(gen)).toContain('can only be used with an imported key');
    const none = await d.req('POST', 'transit/keys/nobody/import_version', { ciphertext: importBlob(randomBytes(32)) });
    expect(err(none)).toContain('no key found with name nobody; to import a new key, use the import/ endpoint');
  });

  test('public-key-only import verifies, cannot sign, and import_version completes it with the matching private key', async () => {
    const kp = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = String(kp.publicKey.export({ format: 'pem', type: 'spki' }));
    ok(await d.req('POST', 'transit/keys/pubonly/import', { type: 'ecdsa-p256', public_key: pem }), 204);
    const k = ok(await d.req('GET', 'transit/keys/pubonly')).body.data;
    expect(k.keys['1'].public_key).toBe(pem);
    const sigDer = sign('sha256', Buffer.from('ext'), kp.privateKey);
    expect(
      ok(await d.req('POST', 'transit/verify/pubonly', { input: b64('ext'), signature: 'vault:v1:' + b64(sigDer) }))
        .body.data.valid,
    ).toBe(true);
    expect((await d.req('POST', 'transit/sign/pubonly', { input: b64('x') })).status).toBe(400);
    // A different private key does not complete version 1.
    const wrong = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const mismatch = await d.req('POST', 'transit/keys/pubonly/import_version', {
      version: 1,
      ciphertext: importBlob(Buffer.from(wrong.export({ format: 'der', type: 'pkcs8' }))),
    });
    expect(mismatch.status).toBe(400);
    expect(err(mismatch)).toContain('key pair does not match');
    ok(
      await d.req('POST', 'transit/keys/pubonly/import_version', {
        ciphertext: importBlob(Buffer.from(kp.privateKey.export({ format: 'der', type: 'pkcs8' }))),
      }),
      204,
    );
    expect(ok(await d.req('GET', 'transit/keys/pubonly')).body.data.latest_version).toBe(1);
    const s = ok(await d.req('POST', 'transit/sign/pubonly', { input: b64('now') })).body.data.signature as string;
    expect(verify('sha256', Buffer.from('now'), kp.publicKey, Buffer.from(s.split(':')[2]!, 'base64'))).toBe(true);
    const again = await d.req('POST', 'transit/keys/pubonly/import_version', {
      version: 1,
      ciphertext: importBlob(Buffer.from(kp.privateKey.export({ format: 'der', type: 'pkcs8' }))),
    });
    expect(err(again)).toContain('private key imported, key version cannot be updated');
  });
});

describe('byok-export between mounts', () => {
  test("a key exported for another mount's wrapping key imports there with the same material", async () => {
    ok(await d.req('POST', 'sys/mounts/transit-b', { type: 'transit' }), 204);
    const bWrap = ok(await d.req('GET', 'transit-b/wrapping_key')).body.data.public_key as string;
    ok(await d.req('POST', 'transit/keys/b-wrap/import', { type: 'rsa-4096', public_key: bWrap }), 204);
    ok(await d.req('POST', 'transit/keys/mover', { exportable: true }));
    ok(await d.req('POST', 'transit/keys/mover/rotate'));
    const refused = await d.req('GET', 'transit/byok-export/b-wrap/secret-k');
    expect(err(refused)).toBe('exportable: key is not exportable');
    expect(err(await d.req('GET', 'transit/byok-export/nowhere/mover'))).toContain(
      'no such destination key to export to',
    );
    expect(err(await d.req('GET', 'transit/byok-export/mover/mover'))).toContain('must be a rsa key');
    const out = ok(await d.req('GET', 'transit/byok-export/b-wrap/mover?hash=SHA512')).body.data;
    expect(out).toMatchObject({ name: 'mover', type: 'aes256-gcm96' });
    expect(Object.keys(out.keys)).toEqual(['1', '2']);
    ok(
      await d.req('POST', 'transit-b/keys/moved/import', {
        ciphertext: out.keys['2'],
        hash_function: 'SHA512',
        exportable: true,
      }),
      204,
    );
    const orig = ok(await d.req('GET', 'transit/export/encryption-key/mover/2')).body.data.keys['2'];
    expect(ok(await d.req('GET', 'transit-b/export/encryption-key/moved/1')).body.data.keys['1']).toBe(orig);
    const latest = ok(await d.req('GET', 'transit/byok-export/b-wrap/mover/latest')).body.data.keys;
    expect(Object.keys(latest)).toEqual(['2']);
  });
});

describe('CSR and certificates (checked with @peculiar/x509)', () => {
  test("csr signs a PKCS#10 request with the key, keeping a template's subject and extensions", async () => {
    const x509 = await loadX509();
    ok(await d.req('POST', 'transit/keys/cert-ec', { type: 'ecdsa-p256' }));
    const empty = ok(await d.req('POST', 'transit/keys/cert-ec/csr', {})).body.data;
    expect(empty).toMatchObject({ name: 'cert-ec', type: 'ecdsa-p256' });
    const req0 = new x509.Pkcs10CertificateRequest(empty.csr);
    expect(await req0.verify()).toBe(true);
    const pub = ok(await d.req('GET', 'transit/keys/cert-ec')).body.data.keys['1'].public_key as string;
    expect(
      Buffer.from(req0.publicKey.rawData).equals(
        Buffer.from(createPublicKey(pub).export({ format: 'der', type: 'spki' })),
      ),
    ).toBe(true);
    // A template from another key: subject and SAN kept, key replaced.
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const other = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
    const tpl = await x509.Pkcs10CertificateRequestGenerator.create({
      name: 'CN=payments.example, O=Keyhold',
      keys: other,
      signingAlgorithm: alg,
      extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'payments.example' }])],
    });
    const signed = ok(await d.req('POST', 'transit/keys/cert-ec/csr', { csr: tpl.toString('pem'), version: 'latest' }))
      .body.data.csr as string;
    const req1 = new x509.Pkcs10CertificateRequest(signed);
    expect(await req1.verify()).toBe(true);
    expect(req1.subject).toBe('CN=payments.example, O=Keyhold');
    const san = (r: InstanceType<typeof x509.Pkcs10CertificateRequest>) =>
      r.extensions.find((e) => e.type === '2.5.29.17');
    expect(san(req1)).toBeDefined();
    expect(Buffer.from(san(req1)!.rawData).equals(Buffer.from(san(tpl)!.rawData))).toBe(true);
    expect(Buffer.from(san(req1)!.rawData).includes(Buffer.from('payments.example'))).toBe(true);
    expect(Buffer.from(req1.publicKey.rawData).equals(Buffer.from(req0.publicKey.rawData))).toBe(true);
  });

  test.each(['ed25519', 'rsa-2048', 'ecdsa-p384'])('csr works for %s keys', async (t) => {
    const x509 = await loadX509();
    ok(await d.req('POST', `transit/keys/csr-${t}`, { type: t }));
    const csr = ok(await d.req('POST', `transit/keys/csr-${t}/csr`, {})).body.data.csr;
    expect(await new x509.Pkcs10CertificateRequest(csr).verify()).toBe(true);
  });

  test('csr refusals: non-signing key, derived key, bad template, missing key', async () => {
    expect(err(await d.req('POST', 'transit/keys/secret-k/csr', {}))).toContain(
      "key type 'aes256-gcm96' does not support signing",
    );
    ok(await d.req('POST', 'transit/keys/csr-derived', { type: 'ed25519', derived: true }));
    expect(err(await d.req('POST', 'transit/keys/csr-derived/csr', {}))).toContain(
      'operation not supported on keys with derivation enabled',
    );
    expect(err(await d.req('POST', 'transit/keys/cert-ec/csr', { csr: 'garbage' }))).toBe(
      'csr: could not decode PEM certificate request',
    );
    expect(err(await d.req('POST', 'transit/keys/no-such/csr', {}))).toContain(
      "key with provided name 'no-such' not found",
    );
  });

  test('set-certificate stores a chain whose leaf carries the key; export returns it; wrong chains are refused', async () => {
    const x509 = await loadX509();
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const caKeys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
    const now = new Date(Date.now() - 60_000);
    const later = new Date(Date.now() + 86_400_000);
    const ca = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '01',
      name: 'CN=Test CA',
      notBefore: now,
      notAfter: later,
      signingAlgorithm: alg,
      keys: caKeys,
      extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
    });
    const csr = new x509.Pkcs10CertificateRequest(
      ok(await d.req('POST', 'transit/keys/cert-ec/csr', {})).body.data.csr,
    );
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber: '02',
      subject: 'CN=cert-ec',
      issuer: ca.subject,
      notBefore: now,
      notAfter: later,
      signingAlgorithm: alg,
      publicKey: csr.publicKey,
      signingKey: caKeys.privateKey,
      extensions: [new x509.BasicConstraintsExtension(false)],
    });
    const chain = leaf.toString('pem') + '\n' + ca.toString('pem');
    ok(await d.req('POST', 'transit/keys/cert-ec/set-certificate', { certificate_chain: chain }), 204);
    const shown = ok(await d.req('GET', 'transit/keys/cert-ec')).body.data.keys['1'].certificate_chain as string;
    expect(shown).toBe([leaf.toString('pem').trim(), ca.toString('pem').trim()].join('\n'));
    expect(ok(await d.req('GET', 'transit/export/certificate-chain/cert-ec/1')).body.data.keys['1']).toBe(shown);

    const caFirst = await d.req('POST', 'transit/keys/cert-ec/set-certificate', {
      certificate_chain: ca.toString('pem') + '\n' + leaf.toString('pem'),
    });
    expect(caFirst.status).toBe(400);
    expect(err(caFirst)).toContain('leaf certificate not found in the first position of the certificate chain');
    ok(await d.req('POST', 'transit/keys/other-ec', { type: 'ecdsa-p256' }));
    const mismatch = await d.req('POST', 'transit/keys/other-ec/set-certificate', { certificate_chain: chain });
    expect(mismatch.status).toBe(400);
    expect(err(mismatch)).toContain('certificate_chain: provided leaf certificate public key does not match');
    const two = await d.req('POST', 'transit/keys/cert-ec/set-certificate', {
      certificate_chain: leaf.toString('pem') + leaf.toString('pem'),
    });
    expect(err(two)).toContain('more than one leaf certificate');
    expect(err(await d.req('POST', 'transit/keys/cert-ec/set-certificate', { certificate_chain: 'none' }))).toContain(
      'certificate_chain',
    );
  });
});
