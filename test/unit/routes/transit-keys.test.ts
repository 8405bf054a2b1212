/**
 * Transit key lifecycle through the real router and core (test/support/harness.ts): create/read/list/delete
 * for every key type, config, rotate, trim, config/keys, cache-config, and the key errors of spec
 * section 7 (5, 8, 9).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createDecipheriv, createPublicKey, constants, hkdfSync, verify } from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { cleanup, startHarness, type Answer, type Harness } from '../../support/harness.js';

let d: Harness;
beforeAll(async () => {
  d = await startHarness();
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

function ok(r: Answer, status = 200): Answer {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}

/** The error text of a failed answer. */
const err = (r: Answer) => (r.body?.errors ?? []).join('; ');

const TYPES = [
  'aes128-gcm96',
  'aes256-gcm96',
  'chacha20-poly1305',
  'xchacha20-poly1305',
  'ed25519',
  'ecdsa-p256',
  'ecdsa-p384',
  'ecdsa-p521',
  'rsa-2048',
  'rsa-3072',
  'rsa-4096',
  'hmac',
];
const SUPPORTS: Record<string, [boolean, boolean, boolean, boolean]> = {
  // [encryption, decryption, signing, derivation] per reference section 2
  'aes128-gcm96': [true, true, false, true],
  'aes256-gcm96': [true, true, false, true],
  'chacha20-poly1305': [true, true, false, true],
  'xchacha20-poly1305': [true, true, false, true],
  ed25519: [false, false, true, true],
  'ecdsa-p256': [false, false, true, false],
  'ecdsa-p384': [false, false, true, false],
  'ecdsa-p521': [false, false, true, false],
  'rsa-2048': [true, true, true, false],
  'rsa-3072': [true, true, true, false],
  'rsa-4096': [true, true, true, false],
  hmac: [false, false, false, false],
};

describe('create and read every key type', () => {
  beforeAll(async () => {
    await Promise.all(
      TYPES.map(async (t) => ok(await d.req('POST', `transit/keys/t-${t}`, { type: t, exportable: true }))),
    );
  });

  test.each(TYPES)('%s: read shows the reference fields and supports_* from the type table', async (t) => {
    const r = ok(await d.req('GET', `transit/keys/t-${t}`));
    const k = r.body.data;
    expect(k).toMatchObject({
      name: `t-${t}`,
      type: t,
      derived: false,
      deletion_allowed: false,
      exportable: true,
      allow_plaintext_backup: false,
      min_available_version: 0,
      min_decryption_version: 1,
      min_encryption_version: 0,
      latest_version: 1,
      auto_rotate_period: 0,
      imported_key: false,
      disallow_sha1: false,
    });
    const [enc, dec, sign, derive] = SUPPORTS[t]!;
    expect([k.supports_encryption, k.supports_decryption, k.supports_signing, k.supports_derivation]).toEqual([
      enc,
      dec,
      sign,
      derive,
    ]);
    expect('kdf' in k).toBe(false);
    if (t === 'hmac') {
      expect(k.keys).toBeUndefined();
      expect(k.key_size).toBe(32);
    } else if (sign) {
      const v1 = k.keys['1'];
      expect(Object.keys(v1).sort()).toEqual([
        'certificate_chain',
        'creation_time',
        'hybrid_public_key',
        'name',
        'public_key',
      ]);
      expect(v1.creation_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      expect(v1.name).toBe({ 'ecdsa-p256': 'P-256', 'ecdsa-p384': 'P-384', 'ecdsa-p521': 'P-521' }[t] ?? t);
      if (t === 'ed25519') expect(Buffer.from(v1.public_key, 'base64')).toHaveLength(32);
      else expect(v1.public_key).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/);
    } else {
      expect(typeof k.keys['1']).toBe('number');
      expect(Math.abs(k.keys['1'] - Date.now() / 1000)).toBeLessThan(600);
    }
  });

  test.each(['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'xchacha20-poly1305'])(
    '%s: the exported key decrypts our ciphertext with an independent implementation',
    async (t) => {
      const ct = ok(await d.req('POST', `transit/encrypt/t-${t}`, { plaintext: b64('attack at dawn') })).body.data
        .ciphertext as string;
      const key = Buffer.from(
        ok(await d.req('GET', `transit/export/encryption-key/t-${t}/1`)).body.data.keys['1'],
        'base64',
      );
      const raw = Buffer.from(ct.split(':')[2]!, 'base64');
      let pt: Buffer;
      if (t === 'xchacha20-poly1305')
        pt = Buffer.from(xchacha20poly1305(key, raw.subarray(0, 24)).decrypt(raw.subarray(24)));
      else {
        const algo =
          t === 'chacha20-poly1305' ? 'chacha20-poly1305' : t === 'aes128-gcm96' ? 'aes-128-gcm' : 'aes-256-gcm';
        const dc = createDecipheriv(algo as 'aes-256-gcm', key, raw.subarray(0, 12), { authTagLength: 16 });
        dc.setAuthTag(raw.subarray(raw.length - 16));
        pt = Buffer.concat([dc.update(raw.subarray(12, raw.length - 16)), dc.final()]);
      }
      expect(pt.toString()).toBe('attack at dawn');
      expect(key.length).toBe(t === 'aes128-gcm96' ? 16 : 32);
    },
  );

  test.each(['ed25519', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'rsa-2048'])(
    '%s: the public key shown on read verifies our signature (node:crypto)',
    async (t) => {
      const input = Buffer.from('message to sign');
      const sig = ok(await d.req('POST', `transit/sign/t-${t}`, { input: b64(input) })).body.data.signature as string;
      const raw = Buffer.from(sig.split(':')[2]!, 'base64');
      const shown = ok(await d.req('GET', `transit/keys/t-${t}`)).body.data.keys['1'].public_key as string;
      const pub =
        t === 'ed25519'
          ? createPublicKey({
              key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(shown, 'base64').toString('base64url') },
              format: 'jwk',
            })
          : createPublicKey(shown);
      const ok1 =
        t === 'ed25519'
          ? verify(null, input, pub, raw)
          : t.startsWith('rsa')
            ? verify(
                'sha256',
                input,
                { key: pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO },
                raw,
              )
            : verify('sha256', input, pub, raw);
      expect(ok1).toBe(true);
      const exported = ok(await d.req('GET', `transit/export/public-key/t-${t}/latest`)).body.data.keys['1'] as string;
      expect(t.startsWith('ecdsa') ? exported + '\n' : exported).toBe(shown);
    },
  );

  test('creating an existing key changes nothing and warns', async () => {
    const before = ok(await d.req('GET', 'transit/keys/t-ed25519')).body.data;
    const r = ok(await d.req('POST', 'transit/keys/t-ed25519', { type: 'aes256-gcm96', exportable: false }));
    expect(r.body.warnings).toContain('key t-ed25519 already existed');
    expect(r.body.data.type).toBe('ed25519');
    expect(ok(await d.req('GET', 'transit/keys/t-ed25519')).body.data).toEqual(before);
  });

  test('hmac keys take key_size 32..512 and every version has its own key of that size', async () => {
    ok(await d.req('POST', 'transit/keys/h64', { type: 'hmac', key_size: 64, exportable: true }));
    ok(await d.req('POST', 'transit/keys/h64/rotate'));
    const keys = ok(await d.req('GET', 'transit/export/hmac-key/h64')).body.data.keys;
    expect(Buffer.from(keys['1'], 'base64')).toHaveLength(64);
    expect(Buffer.from(keys['2'], 'base64')).toHaveLength(64);
    expect(keys['1']).not.toBe(keys['2']);
    expect(ok(await d.req('GET', 'transit/keys/h64')).body.data.key_size).toBe(64);
  });

  test('every version of every type has an independent 32-byte HMAC key', async () => {
    ok(await d.req('POST', 'transit/keys/t-ecdsa-p256/rotate'));
    const keys = ok(await d.req('GET', 'transit/export/hmac-key/t-ecdsa-p256')).body.data.keys;
    expect(Buffer.from(keys['1'], 'base64')).toHaveLength(32);
    expect(keys['1']).not.toBe(keys['2']);
  });
});

describe('creation is validated (400 naming the field)', () => {
  test.each([
    [
      { convergent_encryption: true },
      'convergent_encryption',
      'convergent encryption requires derivation to be enabled',
    ],
    [{ type: 'aes256-gcm96', key_size: 64 }, 'key_size', 'key_size is not valid for algorithm aes256-gcm96'],
    [{ type: 'hmac', key_size: 16 }, 'key_size', 'invalid key_size 16'],
    [{ type: 'hmac', key_size: 600 }, 'key_size', 'invalid key_size 600'],
    [{ auto_rotate_period: '30m' }, 'auto_rotate_period', 'at least an hour'],
    [{ type: 'aes-999' }, 'type', 'unknown key type aes-999'],
    [{ type: 'ecdsa-p256', derived: true }, 'derived', 'not supported for keys of type ecdsa-p256'],
    [
      { type: 'ed25519', derived: true, convergent_encryption: true },
      'convergent_encryption',
      'convergent encryption not supported for keys of type ed25519',
    ],
    [{ type: 'managed_key', managed_key_name: 'hsm1' }, 'managed_key_name', 'no managed key found with name hsm1'],
    [{ type: 'managed_key' }, 'managed_key_name', 'managed_key_name or managed_key_id is required'],
    [{ derived: 'maybe' }, 'derived', 'expected a boolean'],
  ])('%j -> 400 naming %s', async (body, field, text) => {
    const r = await d.req('POST', 'transit/keys/bad', body);
    expect(r.status).toBe(400);
    expect(err(r)).toContain(`${field}:`);
    expect(err(r)).toContain(text);
    expect((await d.req('GET', 'transit/keys/bad')).status).toBe(404);
  });

  test("refuses names outside Vault's key-name grammar", async () => {
    const r = await d.req('POST', 'transit/keys/-dash', {});
    expect(r.status).toBe(400);
    expect(err(r)).toMatch(/^name: /);
  });

  test('auto_rotate_period takes duration strings and reads back in seconds', async () => {
    const r = ok(await d.req('POST', 'transit/keys/auto', { auto_rotate_period: '2h' }));
    expect(r.body.data.auto_rotate_period).toBe(7200);
  });
});

describe('derived keys', () => {
  test('derived ed25519: read with ?context shows the HKDF-derived public key (checked with node:crypto + @noble)', async () => {
    ok(await d.req('POST', 'transit/keys/ded', { type: 'ed25519', derived: true, exportable: true }));
    const plain = ok(await d.req('GET', 'transit/keys/ded')).body.data;
    expect(plain.kdf).toBe('hkdf_sha256');
    expect(plain.convergent_encryption).toBe(false);
    expect(plain.keys['1'].public_key).toBe('');
    const ctx = Buffer.from('tenant-7');
    const shown = ok(await d.req('GET', `transit/keys/ded?context=${encodeURIComponent(b64(ctx))}`)).body.data.keys['1']
      .public_key;
    const stored = Buffer.from(
      ok(await d.req('GET', 'transit/export/signing-key/ded/1')).body.data.keys['1'],
      'base64',
    );
    const seed = Buffer.from(hkdfSync('sha256', stored, Buffer.alloc(0), ctx, 32));
    expect(shown).toBe(Buffer.from(ed25519.getPublicKey(seed)).toString('base64'));
    const other = ok(await d.req('GET', `transit/keys/ded?context=${encodeURIComponent(b64('tenant-8'))}`)).body.data
      .keys['1'].public_key;
    expect(other).not.toBe(shown);
    // The derived key verifies a signature made with the same context.
    const sig = ok(await d.req('POST', 'transit/sign/ded', { input: b64('hi'), context: b64(ctx) })).body.data
      .signature as string;
    expect(
      ed25519.verify(Buffer.from(sig.split(':')[2]!, 'base64'), Buffer.from('hi'), Buffer.from(shown, 'base64')),
    ).toBe(true);
  });

  test('convergent keys read as convergent_encryption_version -1 (modern Vault)', async () => {
    const k = ok(await d.req('POST', 'transit/keys/conv', { derived: true, convergent_encryption: true })).body.data;
    expect(k).toMatchObject({
      derived: true,
      convergent_encryption: true,
      convergent_encryption_version: -1,
      kdf: 'hkdf_sha256',
    });
  });
});

describe('list and delete (spec error 5)', () => {
  test('LIST and ?list=true return sorted names; GET without list is 405', async () => {
    const a = ok(await d.req('LIST', 'transit/keys')).body.data.keys as string[];
    expect(a).toEqual([...a].sort());
    expect(a).toContain('t-aes256-gcm96');
    expect(ok(await d.req('GET', 'transit/keys?list=true')).body.data.keys).toEqual(a);
    expect((await d.req('GET', 'transit/keys')).status).toBe(405);
  });

  test('an empty mount lists 404 {"errors":[]}', async () => {
    ok(await d.req('POST', 'sys/mounts/empty-transit', { type: 'transit' }), 204);
    const r = await d.req('LIST', 'empty-transit/keys');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ errors: [] });
  });

  test('delete is refused until deletion_allowed, naming the flag; then the key and its data are gone', async () => {
    ok(await d.req('POST', 'transit/keys/doomed', {}));
    const refused = await d.req('DELETE', 'transit/keys/doomed');
    expect(refused.status).toBe(400);
    expect(err(refused)).toContain('deletion_allowed');
    expect(err(refused)).toContain('error deleting policy doomed: deletion is not allowed for this key');
    ok(await d.req('POST', 'transit/keys/doomed/config', { deletion_allowed: true }));
    ok(await d.req('DELETE', 'transit/keys/doomed'), 204);
    expect((await d.req('GET', 'transit/keys/doomed')).status).toBe(404);
    expect(ok(await d.req('LIST', 'transit/keys')).body.data.keys).not.toContain('doomed');
    const again = await d.req('DELETE', 'transit/keys/doomed');
    expect(again.status).toBe(400);
    expect(err(again)).toContain('not found');
  });
});

describe('config (spec 2.2, error 9)', () => {
  beforeAll(async () => {
    ok(await d.req('POST', 'transit/keys/cfg', {}));
    for (let i = 0; i < 4; i++) ok(await d.req('POST', 'transit/keys/cfg/rotate'));
  });

  test('refuses min_encryption_version below a non-zero min_decryption_version', async () => {
    const r = await d.req('POST', 'transit/keys/cfg/config', { min_decryption_version: 3, min_encryption_version: 2 });
    expect(r.status).toBe(400);
    expect(err(r)).toContain('min_encryption_version:');
    expect(err(r)).toContain('must be greater than or equal to min decryption version of 3');
    expect(ok(await d.req('GET', 'transit/keys/cfg')).body.data.min_decryption_version).toBe(1);
  });

  test('applies valid minimums; reads show only versions >= min_decryption_version', async () => {
    const k = ok(
      await d.req('POST', 'transit/keys/cfg/config', { min_decryption_version: 3, min_encryption_version: 4 }),
    ).body.data;
    expect([k.min_decryption_version, k.min_encryption_version]).toEqual([3, 4]);
    expect(Object.keys(k.keys)).toEqual(['3', '4', '5']);
    const old = await d.req('GET', 'transit/export/hmac-key/cfg/2');
    expect(old.status).toBe(400);
  });

  test('forces min_decryption_version 0 to 1 with a warning; refuses beyond latest', async () => {
    const r = ok(
      await d.req('POST', 'transit/keys/cfg/config', { min_decryption_version: 0, min_encryption_version: 0 }),
    );
    expect(r.body.warnings).toContain('since Vault 0.3, transit key numbering starts at 1; forcing minimum to 1');
    const high = await d.req('POST', 'transit/keys/cfg/config', { min_decryption_version: 9 });
    expect(high.status).toBe(400);
    expect(err(high)).toContain('cannot set min decryption version of 9, latest key version is 5');
  });

  test('exportable and allow_plaintext_backup cannot be turned off; disallow_sha1 shows on read', async () => {
    ok(
      await d.req('POST', 'transit/keys/cfg/config', {
        exportable: true,
        allow_plaintext_backup: true,
        disallow_sha1: true,
      }),
    );
    const k = ok(await d.req('POST', 'transit/keys/cfg/config', { exportable: false, allow_plaintext_backup: 'false' }))
      .body.data;
    expect([k.exportable, k.allow_plaintext_backup, k.disallow_sha1]).toEqual([true, true, true]);
  });

  test('auto_rotate_period: omitted keeps it, 0 clears it, under an hour is refused', async () => {
    ok(await d.req('POST', 'transit/keys/cfg/config', { auto_rotate_period: '24h' }));
    expect(
      ok(await d.req('POST', 'transit/keys/cfg/config', { deletion_allowed: false })).body.data.auto_rotate_period,
    ).toBe(86400);
    const short = await d.req('POST', 'transit/keys/cfg/config', { auto_rotate_period: 60 });
    expect(short.status).toBe(400);
    expect(err(short)).toContain('auto_rotate_period');
    expect(
      ok(await d.req('POST', 'transit/keys/cfg/config', { auto_rotate_period: 0 })).body.data.auto_rotate_period,
    ).toBe(0);
  });

  test('config of a missing key is a 400 naming it', async () => {
    const r = await d.req('POST', 'transit/keys/nope/config', { deletion_allowed: true });
    expect(r.status).toBe(400);
    expect(err(r)).toBe('no existing key named nope could be found');
  });

  test('sha1 signing is refused once disallow_sha1 is set', async () => {
    ok(await d.req('POST', 'transit/keys/s1', { type: 'ecdsa-p256' }));
    ok(await d.req('POST', 'transit/sign/s1/sha1', { input: b64('x') }));
    ok(await d.req('POST', 'transit/keys/s1/config', { disallow_sha1: true }));
    expect((await d.req('POST', 'transit/sign/s1/sha1', { input: b64('x') })).status).toBe(400);
    ok(await d.req('POST', 'transit/sign/s1/sha2-256', { input: b64('x') }));
  });
});

describe('rotate and trim (spec section 3, errors 8 and 9)', () => {
  test.each(TYPES)('%s rotates to a new latest version with fresh material', async (t) => {
    const r = ok(await d.req('POST', `transit/keys/t-${t}/rotate`));
    const latest = r.body.data.latest_version as number;
    expect(latest).toBeGreaterThanOrEqual(2);
    const kind = t === 'hmac' ? 'hmac-key' : SUPPORTS[t]![0] ? 'encryption-key' : 'signing-key';
    const keys = ok(await d.req('GET', `transit/export/${kind}/t-${t}`)).body.data.keys;
    expect(keys[String(latest)]).not.toBe(keys[String(latest - 1)]);
  });

  test('rotating a missing key is a 400', async () => {
    const r = await d.req('POST', 'transit/keys/ghost/rotate');
    expect(r.status).toBe(400);
    expect(err(r)).toBe('key not found');
  });

  test('new encryptions use the new version; old ciphertexts still decrypt', async () => {
    ok(await d.req('POST', 'transit/keys/rot', {}));
    const c1 = ok(await d.req('POST', 'transit/encrypt/rot', { plaintext: b64('one') })).body.data.ciphertext as string;
    ok(await d.req('POST', 'transit/keys/rot/rotate'));
    const c2 = ok(await d.req('POST', 'transit/encrypt/rot', { plaintext: b64('two') })).body.data.ciphertext as string;
    expect(c1.startsWith('vault:v1:')).toBe(true);
    expect(c2.startsWith('vault:v2:')).toBe(true);
    expect(
      Buffer.from(
        ok(await d.req('POST', 'transit/decrypt/rot', { ciphertext: c1 })).body.data.plaintext,
        'base64',
      ).toString(),
    ).toBe('one');
  });

  test('trim enforces its bounds and then drops old versions for good', async () => {
    ok(await d.req('POST', 'transit/keys/tr', { exportable: true }));
    for (let i = 0; i < 4; i++) ok(await d.req('POST', 'transit/keys/tr/rotate'));
    const notSet = await d.req('POST', 'transit/keys/tr/trim', { min_available_version: 2 });
    expect(notSet.status).toBe(400);
    expect(err(notSet)).toContain(
      'min_available_version: minimum available version cannot be set when minimum encryption version is not set',
    );
    ok(await d.req('POST', 'transit/keys/tr/config', { min_decryption_version: 3, min_encryption_version: 4 }));
    const tooHigh = await d.req('POST', 'transit/keys/tr/trim', { min_available_version: 4 });
    expect(tooHigh.status).toBe(400);
    expect(err(tooHigh)).toContain('cannot be greater than minimum decryption version');
    const missing = await d.req('POST', 'transit/keys/tr/trim', {});
    expect(missing.status).toBe(400);
    expect(err(missing)).toContain('min_available_version');
    const k = ok(await d.req('POST', 'transit/keys/tr/trim', { min_available_version: 3 })).body.data;
    expect(k.min_available_version).toBe(3);
    const back = await d.req('POST', 'transit/keys/tr/config', { min_decryption_version: 1 });
    expect(back.status).toBe(400);
    expect(err(back)).toContain('min decryption version should not be less then min available version');
    const dec = await d.req('POST', 'transit/keys/tr/trim', { min_available_version: 2 });
    expect(err(dec)).toContain('cannot be decremented');
    const gone = await d.req('GET', 'transit/export/encryption-key/tr/2');
    expect(gone.status).toBe(400);
    expect(err(gone)).toContain('version');
  });
});

describe('config/keys and cache-config', () => {
  test('disable_upsert stops encrypt from creating keys', async () => {
    expect(ok(await d.req('GET', 'transit/config/keys')).body.data).toEqual({ disable_upsert: false });
    ok(await d.req('POST', 'transit/encrypt/upserted', { plaintext: b64('x') }));
    expect(ok(await d.req('POST', 'transit/config/keys', { disable_upsert: true })).body.data).toEqual({
      disable_upsert: true,
    });
    expect(ok(await d.req('GET', 'transit/config/keys')).body.data).toEqual({ disable_upsert: true });
    const r = await d.req('POST', 'transit/encrypt/not-upserted', { plaintext: b64('x') });
    expect(r.status).toBe(400);
    expect((await d.req('GET', 'transit/keys/not-upserted')).status).toBe(404);
    ok(await d.req('POST', 'transit/config/keys', { disable_upsert: false }));
  });

  test('cache size must be 0 or >= 10; the value persists and applies after plugin reload', async () => {
    expect(ok(await d.req('GET', 'transit/cache-config')).body.data).toEqual({ size: 0 });
    const bad = await d.req('POST', 'transit/cache-config', { size: 5 });
    expect(bad.status).toBe(400);
    expect(err(bad)).toBe('size: size must be 0 or a value greater or equal to 10');
    const set = ok(await d.req('POST', 'transit/cache-config', { size: 12 }));
    expect(set.body.data).toEqual({ size: 12 });
    expect(set.body.warnings?.[0]).toContain('sys/plugins/reload/backend');
    ok(await d.req('POST', 'sys/plugins/reload/backend', { mounts: ['transit/'] }));
    expect(ok(await d.req('GET', 'transit/cache-config')).body.data).toEqual({ size: 12 });
    // With the LRU active every key is still served (and no warning once the size is live).
    const names = ok(await d.req('LIST', 'transit/keys')).body.data.keys as string[];
    expect(names.length).toBeGreaterThan(12);
    for (const n of names) ok(await d.req('GET', `transit/keys/${n}`));
    expect(ok(await d.req('POST', 'transit/cache-config', { size: 12 })).body.warnings).toBeNull();
  });
});

describe('asynchronous key generation', () => {
  test('the core answers other requests while an RSA-4096 key is generated', async () => {
    let done = false;
    const big = d.req('POST', 'transit/keys/rsa-big', { type: 'rsa-4096' }).then((r) => {
      done = true;
      return r;
    });
    // Ask for something else right away; it must come back before the RSA key.
    const quick = await d.req('GET', 'transit/keys/t-aes256-gcm96');
    const doneWhenQuickAnswered = done;
    expect(quick.status).toBe(200);
    expect(ok(await big).body.data.type).toBe('rsa-4096');
    expect(doneWhenQuickAnswered).toBe(false);
  });
});
