/**
 * Transit data operations through the real router and core (test/support/harness.ts): independent
 * cross-checks through export and the docs' backup sample, batches and their statuses (spec 7 items
 * 1-3), upsert and ACL (item 4), policies on datakey paths and rewrap, sha1 refusal, 10,000-item
 * batches, and Vault's exact error strings (reference 7.5). The request size limit (item 11) streams a
 * body over the socket: test/integration/foundation-http.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
  verify as nodeVerify,
  constants,
} from 'node:crypto';
import { xchacha20poly1305, chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { cleanup, startHarness, type Answer, type Harness } from '../../support/harness.js';

const vec6 = JSON.parse(readFileSync('test/vectors/vault-docs-backup-aes.json', 'utf8'));

let d: Harness;
beforeAll(async () => {
  d = await startHarness();
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
const post = (path: string, body: unknown, token?: string) =>
  d.req('POST', `transit/${path}`, body, token ? { token } : {});
const payload = (ct: string) => Buffer.from(ct.split(':')[2]!, 'base64');

async function tokenWith(name: string, policy: string): Promise<string> {
  ok(await d.req('PUT', `sys/policies/acl/${name}`, { policy }), 204);
  return ok(await d.req('POST', 'auth/token/create', { policies: [name], no_default_policy: true })).body.auth
    .client_token;
}

async function exported(kind: string, name: string, version = 1): Promise<string> {
  return ok(await d.req('GET', `transit/export/${kind}/${name}/${version}`)).body.data.keys[String(version)];
}

describe('independent cross-checks through export', () => {
  test.each(['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'xchacha20-poly1305'])(
    '%s: node/@noble decrypt ours and ours decrypts theirs',
    async (type) => {
      const name = `x-${type}`;
      ok(await post(`keys/${name}`, { type, exportable: true }));
      const key = Buffer.from(await exported('encryption-key', name), 'base64');
      const pt = randomBytes(100);
      const ct = ok(await post(`encrypt/${name}`, { plaintext: b64(pt), associated_data: b64('aad') })).body.data
        .ciphertext as string;
      const raw = payload(ct);
      let opened: Buffer;
      if (type.startsWith('aes')) {
        const dc = createDecipheriv(key.length === 16 ? 'aes-128-gcm' : 'aes-256-gcm', key, raw.subarray(0, 12));
        dc.setAAD(Buffer.from('aad'));
        dc.setAuthTag(raw.subarray(raw.length - 16));
        opened = Buffer.concat([dc.update(raw.subarray(12, raw.length - 16)), dc.final()]);
      } else if (type === 'chacha20-poly1305')
        opened = Buffer.from(chacha20poly1305(key, raw.subarray(0, 12), Buffer.from('aad')).decrypt(raw.subarray(12)));
      else
        opened = Buffer.from(xchacha20poly1305(key, raw.subarray(0, 24), Buffer.from('aad')).decrypt(raw.subarray(24)));
      expect(opened).toEqual(pt);
      // And the other way: a ciphertext made in the test with the reference layout.
      const nonce = randomBytes(type === 'xchacha20-poly1305' ? 24 : 12);
      const mine = Buffer.from('built outside keyhold');
      let sealed: Buffer;
      if (type.startsWith('aes')) {
        const c = createCipheriv(key.length === 16 ? 'aes-128-gcm' : 'aes-256-gcm', key, nonce);
        sealed = Buffer.concat([c.update(mine), c.final(), c.getAuthTag()]);
      } else
        sealed = Buffer.from(
          (type === 'chacha20-poly1305' ? chacha20poly1305 : xchacha20poly1305)(key, nonce).encrypt(mine),
        );
      const dec = ok(
        await post(`decrypt/${name}`, { ciphertext: 'vault:v1:' + Buffer.concat([nonce, sealed]).toString('base64') }),
      );
      expect(Buffer.from(dec.body.data.plaintext, 'base64')).toEqual(mine);
    },
  );

  test('the docs backup sample (vector 6): a node-built ciphertext decrypts, ours decrypts with node', async () => {
    ok(await post('restore/docs-aes', { backup: vec6.backup }), 204);
    const key = Buffer.from(vec6.key_v1, 'base64');
    const nonce = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', key, nonce);
    const built =
      'vault:v1:' + Buffer.concat([nonce, c.update('from the docs key'), c.final(), c.getAuthTag()]).toString('base64');
    expect(
      Buffer.from(ok(await post('decrypt/docs-aes', { ciphertext: built })).body.data.plaintext, 'base64').toString(),
    ).toBe('from the docs key');
    const ours = ok(await post('encrypt/docs-aes', { plaintext: b64('ours') })).body.data.ciphertext as string;
    const raw = payload(ours);
    const dc = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    dc.setAuthTag(raw.subarray(raw.length - 16));
    expect(Buffer.concat([dc.update(raw.subarray(12, raw.length - 16)), dc.final()]).toString()).toBe('ours');
    // HMAC with the sample's hmac_key, recomputed with node.
    const mac = ok(await post('hmac/docs-aes', { input: b64('fox') })).body.data.hmac;
    expect(mac).toBe(
      'vault:v1:' + createHmac('sha256', Buffer.from(vec6.hmac_key_v1, 'base64')).update('fox').digest('base64'),
    );
  });

  test('rsa-2048: OAEP ciphertexts open with node from the exported key; PKCS#1 v1.5 via padding_scheme', async () => {
    ok(await post('keys/x-rsa', { type: 'rsa-2048', exportable: true }));
    const priv = createPrivateKey(await exported('encryption-key', 'x-rsa'));
    const ct = ok(await post('encrypt/x-rsa', { plaintext: b64('rsa data') })).body.data.ciphertext;
    expect(
      privateDecrypt(
        { key: priv, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
        payload(ct),
      ).toString(),
    ).toBe('rsa data');
    const theirs = publicEncrypt(
      { key: createPublicKey(priv), padding: constants.RSA_PKCS1_PADDING },
      Buffer.from('v15'),
    );
    const dec = ok(
      await post('decrypt/x-rsa', { ciphertext: 'vault:v1:' + theirs.toString('base64'), padding_scheme: 'pkcs1v15' }),
    );
    expect(Buffer.from(dec.body.data.plaintext, 'base64').toString()).toBe('v15');
    expect(err(await post('encrypt/x-rsa', { plaintext: b64('x'), associated_data: b64('a') }))).toBe(
      'associated_data provided for non-AEAD cipher suite rsa-2048',
    );
  });

  test('derived and convergent keys: context required, same context and plaintext give the same ciphertext', async () => {
    ok(await post('keys/x-conv', { derived: true, convergent_encryption: true }));
    const miss = await post('encrypt/x-conv', { plaintext: b64('x') });
    expect(miss.status).toBe(400);
    expect(err(miss)).toMatch(/^missing 'context' for key derivation/);
    const a = ok(await post('encrypt/x-conv', { plaintext: b64('same'), context: b64('c1') })).body.data.ciphertext;
    expect(ok(await post('encrypt/x-conv', { plaintext: b64('same'), context: b64('c1') })).body.data.ciphertext).toBe(
      a,
    );
    expect(
      ok(await post('encrypt/x-conv', { plaintext: b64('same'), context: b64('c2') })).body.data.ciphertext,
    ).not.toBe(a);
    expect(err(await post('decrypt/x-conv', { ciphertext: a, context: b64('c2') }))).toBe(
      'cipher: message authentication failed',
    );
    expect(
      err(await post('encrypt/x-conv', { plaintext: b64('same'), context: b64('c1'), nonce: b64('12345678') })),
    ).toBe('provided nonce not allowed for this key');
  });

  test.each([
    ['ecdsa-p256', 'sha2-256', 'sha256'],
    ['ecdsa-p384', 'sha2-384', 'sha384'],
    ['ecdsa-p521', 'sha3-512', 'sha3-512'],
    ['rsa-2048', 'sha2-512', 'sha512'],
  ])('%s signatures verify with node from the exported public key', async (type, hash, nodeHash) => {
    const name = `s-${type}`;
    ok(await post(`keys/${name}`, { type }));
    const pub = createPublicKey(await exported('public-key', name));
    const input = randomBytes(64);
    const sig = ok(await post(`sign/${name}/${hash}`, { input: b64(input) })).body.data.signature as string;
    const opts = type.startsWith('rsa')
      ? { key: pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO }
      : pub;
    expect(nodeVerify(nodeHash, input, opts, payload(sig))).toBe(true);
    expect(ok(await post(`verify/${name}/${hash}`, { input: b64(input), signature: sig })).body.data.valid).toBe(true);
    expect(ok(await post(`verify/${name}/${hash}`, { input: b64('other'), signature: sig })).body.data.valid).toBe(
      false,
    );
  });

  test('ed25519 signatures verify with @noble from the exported public key; derived keys return their public key', async () => {
    ok(await post('keys/ed', { type: 'ed25519' }));
    const pub = Buffer.from(await exported('public-key', 'ed'), 'base64');
    const sig = ok(await post('sign/ed', { input: b64('hello') })).body.data.signature as string;
    expect(ed25519.verify(payload(sig), Buffer.from('hello'), pub)).toBe(true);
    ok(await post('keys/ed-derived', { type: 'ed25519', derived: true }));
    const a = ok(await post('sign/ed-derived', { input: b64('m'), context: b64('ctx') })).body.data;
    expect(ed25519.verify(payload(a.signature), Buffer.from('m'), Buffer.from(a.public_key, 'base64'))).toBe(true);
    const b = ok(await post('sign/ed-derived', { input: b64('m'), context: b64('ctx') })).body.data;
    expect(b).toEqual(a);
    const batch = ok(
      await post('sign/ed-derived', {
        batch_input: [
          { input: b64('m'), context: b64('ctx') },
          { input: b64('m'), context: b64('other') },
        ],
      }),
    ).body.data.batch_results;
    expect(batch[0].publickey).toBe(a.public_key);
    expect(batch[1].publickey).not.toBe(a.public_key);
  });

  test('HMAC matches node with the exported hmac key, for every algorithm', async () => {
    ok(await post('keys/mac', { type: 'aes256-gcm96', exportable: true }));
    const hk = Buffer.from(await exported('hmac-key', 'mac'), 'base64');
    for (const [alg, node] of [
      ['sha2-256', 'sha256'],
      ['sha2-512', 'sha512'],
      ['sha3-256', 'sha3-256'],
      ['sha1', 'sha1'],
    ]) {
      const mac = ok(await post(`hmac/mac/${alg}`, { input: b64('data') })).body.data.hmac;
      expect(mac).toBe('vault:v1:' + createHmac(node!, hk).update('data').digest('base64'));
      expect(ok(await post('verify/mac', { input: b64('data'), hmac: mac, hash_algorithm: alg })).body.data.valid).toBe(
        true,
      );
    }
  });
});

describe('batches (spec 7 items 1-3)', () => {
  beforeAll(async () => {
    ok(await post('keys/b', {}));
  });

  test('encrypt batch keeps order, echoes references, and reports a per-item error with 400', async () => {
    const r = await post('encrypt/b', {
      batch_input: [
        { plaintext: b64('one'), reference: 'r1' },
        { plaintext: '%%%', reference: 'r2' },
        { plaintext: b64('three') },
      ],
    });
    expect(r.status).toBe(400);
    const items = r.body.data.batch_results;
    expect(items.map((i: { reference: string }) => i.reference)).toEqual(['r1', 'r2', '']);
    expect(items[0].ciphertext).toMatch(/^vault:v1:/);
    expect(items[0].key_version).toBe(1);
    expect(items[1].error).toMatch(/plaintext/);
    expect(items[1].ciphertext).toBeUndefined();
    expect(items[2].ciphertext).toMatch(/^vault:v1:/);
    expect(r.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('partial_failure_response_code replaces the partial status; an all-failed batch is 400 regardless', async () => {
    const partial = await post('encrypt/b', {
      partial_failure_response_code: 207,
      batch_input: [{ plaintext: b64('a') }, { plaintext: '%' }],
    });
    expect(partial.status).toBe(207);
    const all = await post('encrypt/b', {
      partial_failure_response_code: 207,
      batch_input: [{ plaintext: '%' }, { plaintext: '%' }],
    });
    expect(all.status).toBe(400);
    expect(all.body.data.batch_results).toHaveLength(2);
  });

  test('decrypt batch: per-item errors (too new, bad prefix) with 400; plaintext "" on error', async () => {
    const ct = ok(await post('encrypt/b', { plaintext: b64('x') })).body.data.ciphertext;
    const r = await post('decrypt/b', {
      batch_input: [
        { ciphertext: ct, reference: 'a' },
        { ciphertext: 'vault:v9:AAAA', reference: 'b' },
        { ciphertext: 'nope' },
      ],
    });
    expect(r.status).toBe(400);
    const items = r.body.data.batch_results;
    expect(items[0]).toEqual({ plaintext: b64('x'), reference: 'a' });
    expect(items[1]).toEqual({ plaintext: '', error: 'invalid ciphertext: version is too new', reference: 'b' });
    expect(items[2].error).toBe('invalid ciphertext: no prefix');
  });

  test('rewrap batch follows spec 7 item 1 (partial failure -> 400, or the override)', async () => {
    const ct = ok(await post('encrypt/b', { plaintext: b64('x') })).body.data.ciphertext;
    const r = await post('rewrap/b', { batch_input: [{ ciphertext: ct }, { ciphertext: 'bad' }] });
    expect(r.status).toBe(400);
    expect(r.body.data.batch_results[0].ciphertext).toMatch(/^vault:v1:/);
    expect(
      (
        await post('rewrap/b', {
          partial_failure_response_code: 299,
          batch_input: [{ ciphertext: ct }, { ciphertext: 'bad' }],
        })
      ).status,
    ).toBe(299);
  });

  test('hmac, sign and verify batches answer 200 with error items (spec 7 item 2)', async () => {
    const h = ok(
      await post('hmac/b', {
        batch_input: [{ input: b64('a'), reference: 'x' }, { input: '%%' }, { reference: 'no input' }],
      }),
    ).body.data.batch_results;
    expect(h[0].hmac).toMatch(/^vault:v1:/);
    expect(h[0].reference).toBe('x');
    expect(h[1].error).toMatch(/unable to decode input as base64/);
    expect(h[2].error).toBe('missing input for HMAC');
    ok(await post('keys/bs', { type: 'ecdsa-p256' }));
    const s = ok(await post('sign/bs', { batch_input: [{ input: b64('a') }, { input: '%%' }, {}] })).body.data
      .batch_results;
    expect(s[0].signature).toMatch(/^vault:v1:/);
    expect(s[0].key_version).toBe(1);
    expect(s[1]).toMatchObject({ key_version: 0, error: expect.stringMatching(/unable to decode input as base64/) });
    expect(s[2].error).toBe('missing input');
    const v = ok(
      await post('verify/bs', {
        batch_input: [
          { input: b64('a'), signature: s[0].signature },
          { input: b64('b'), signature: s[0].signature },
          { input: b64('a'), signature: 'junk' },
        ],
      }),
    ).body.data.batch_results;
    expect(v.map((i: { valid: boolean }) => i.valid)).toEqual([true, false, false]);
    expect(v[2].error).toBe('invalid signature: no prefix');
  });

  test('HMAC verify batch items omit valid when false', async () => {
    const mac = ok(await post('hmac/b', { input: b64('a') })).body.data.hmac;
    const v = ok(
      await post('verify/b', {
        batch_input: [
          { input: b64('a'), hmac: mac },
          { input: b64('z'), hmac: mac },
        ],
      }),
    ).body.data.batch_results;
    expect(v[0].valid).toBe(true);
    expect('valid' in v[1]).toBe(false);
  });

  test('mixing hmac and signature in one verify batch is a 400 (spec 7 item 3)', async () => {
    const r = await post('verify/b', {
      batch_input: [
        { input: b64('a'), hmac: 'vault:v1:AA==' },
        { input: b64('a'), signature: 'vault:v1:AA==' },
      ],
    });
    expect(r.status).toBe(400);
    expect(err(r)).toBe("elements of batch_input must all provide either 'signature', 'hmac' or 'cmac'");
    expect(err(await post('verify/b', { input: b64('a') }))).toBe(
      "missing one of 'signature', 'hmac' or 'cmac' arguments to verify",
    );
    expect(err(await post('verify/b', { batch_input: [{ input: b64('a'), hmac: 'x' }, { input: b64('a') }] }))).toBe(
      "some elements of batch_input are missing 'hmac'",
    );
  });

  test('a 10,000-item batch encrypts and decrypts in order', async () => {
    const n = 10_000;
    const batch = Array.from({ length: n }, (_, i) => ({ plaintext: b64(`item-${i}`), reference: String(i) }));
    const enc = ok(await post('encrypt/b', { batch_input: batch })).body.data.batch_results as {
      ciphertext: string;
      reference: string;
    }[];
    expect(enc).toHaveLength(n);
    expect(enc[9999]!.reference).toBe('9999');
    const dec = ok(
      await post('decrypt/b', { batch_input: enc.map((e) => ({ ciphertext: e.ciphertext, reference: e.reference })) }),
    ).body.data.batch_results as { plaintext: string }[];
    expect(Buffer.from(dec[0]!.plaintext, 'base64').toString()).toBe('item-0');
    expect(Buffer.from(dec[n - 1]!.plaintext, 'base64').toString()).toBe(`item-${n - 1}`);
  });
});

describe('upsert and ACL (spec 7 item 4)', () => {
  test('root upserts a key; type and derivation come from the request', async () => {
    const r = ok(
      await post('encrypt/up-chacha', { plaintext: b64('x'), type: 'chacha20-poly1305', context: b64('c') }),
    );
    expect(r.body.data.ciphertext).toMatch(/^vault:v1:/);
    const k = ok(await d.req('GET', 'transit/keys/up-chacha')).body.data;
    expect(k.type).toBe('chacha20-poly1305');
    expect(k.derived).toBe(true);
  });

  test('batch upsert with convergent_encryption creates a convergent key (same input -> same ciphertext)', async () => {
    const item = { plaintext: b64('same'), context: b64('ctx') };
    const r = ok(await post('encrypt/up-conv', { convergent_encryption: true, batch_input: [item, item] })).body.data
      .batch_results;
    expect(r[0].ciphertext).toBe(r[1].ciphertext);
    expect(ok(await d.req('GET', 'transit/keys/up-conv')).body.data.convergent_encryption).toBe(true);
    expect(err(await post('encrypt/up-conv2', { convergent_encryption: true, plaintext: b64('x') }))).toBe(
      'convergent encryption requires derivation to be enabled, so context is required',
    );
    expect(err(await post('encrypt/up-ec', { type: 'ecdsa-p256', plaintext: b64('x') }))).toBe(
      'key type ecdsa-p256 not supported for this operation',
    );
    expect(
      err(
        await post('encrypt/up-b', {
          batch_input: [{ plaintext: b64('x'), context: b64('c') }, { plaintext: b64('y') }],
        }),
      ),
    ).toBe('context should be set either in all the request blocks or in none');
  });

  test('a token with only update on encrypt gets 403 for a missing key; with create it upserts', async () => {
    const upd = await tokenWith('enc-update', 'path "transit/encrypt/*" { capabilities = ["update"] }');
    const r = await post('encrypt/nokey-1', { plaintext: b64('x') }, upd);
    expect(r.status).toBe(403);
    expect((await d.req('GET', 'transit/keys/nokey-1')).status).toBe(404);
    ok(await post('keys/exists-1', {}));
    ok(await post('encrypt/exists-1', { plaintext: b64('x') }, upd));
    const crt = await tokenWith('enc-create', 'path "transit/encrypt/*" { capabilities = ["create"] }');
    ok(await post('encrypt/nokey-2', { plaintext: b64('x') }, crt));
    expect(ok(await d.req('GET', 'transit/keys/nokey-2')).body.data.type).toBe('aes256-gcm96');
  });

  test('with disable_upsert, encrypt on a missing key is 400 "encryption key not found"', async () => {
    ok(await post('config/keys', { disable_upsert: true }));
    try {
      const r = await post('encrypt/nokey-3', { plaintext: b64('x') });
      expect(r.status).toBe(400);
      expect(err(r)).toBe('encryption key not found');
    } finally {
      ok(await post('config/keys', { disable_upsert: false }));
    }
  });
});

describe('policies on datakey and rewrap', () => {
  beforeAll(async () => {
    ok(await post('keys/pk', {}));
  });

  test('a token allowed datakey/wrapped/* but not datakey/plaintext/* gets wrapped keys only', async () => {
    const t = await tokenWith('wrapped-only', 'path "transit/datakey/wrapped/*" { capabilities = ["update"] }');
    const w = ok(await post('datakey/wrapped/pk', { bits: 512 }, t)).body.data;
    expect(w.ciphertext).toMatch(/^vault:v1:/);
    expect(w.plaintext).toBeUndefined();
    expect((await post('datakey/plaintext/pk', {}, t)).status).toBe(403);
    // Root can unwrap it: 64 random bytes.
    expect(
      Buffer.from(ok(await post('decrypt/pk', { ciphertext: w.ciphertext })).body.data.plaintext, 'base64').length,
    ).toBe(64);
  });

  test('datakey plaintext returns a key whose ciphertext decrypts to it; bad bits and path words are 400', async () => {
    const p = ok(await post('datakey/plaintext/pk', { bits: 128 })).body.data;
    expect(Buffer.from(p.plaintext, 'base64').length).toBe(16);
    expect(ok(await post('decrypt/pk', { ciphertext: p.ciphertext })).body.data.plaintext).toBe(p.plaintext);
    expect(err(await post('datakey/plaintext/pk', { bits: 100 }))).toBe('invalid bit length');
    expect(err(await post('datakey/both/pk', {}))).toBe("Invalid path, must be 'plaintext' or 'wrapped'");
  });

  test('rewrap can be granted alone: it never returns plaintext and the token cannot decrypt', async () => {
    const t = await tokenWith('rewrap-only', 'path "transit/rewrap/*" { capabilities = ["update"] }');
    const old = ok(await post('encrypt/pk', { plaintext: b64('keep') })).body.data.ciphertext;
    ok(await post('keys/pk/rotate', {}));
    const r = ok(await post('rewrap/pk', { ciphertext: old }, t)).body.data;
    expect(r.ciphertext).toMatch(/^vault:v2:/);
    expect(r.key_version).toBe(2);
    expect(r.plaintext).toBeUndefined();
    expect((await post('decrypt/pk', { ciphertext: r.ciphertext }, t)).status).toBe(403);
    expect(
      Buffer.from(ok(await post('decrypt/pk', { ciphertext: r.ciphertext })).body.data.plaintext, 'base64').toString(),
    ).toBe('keep');
  });
});

describe('versions, sha1 and errors', () => {
  test('min_decryption_version makes old ciphertexts "too old"; key_version selects the version', async () => {
    ok(await post('keys/v', {}));
    ok(await post('keys/v/rotate', {}));
    const v1 = ok(await post('encrypt/v', { plaintext: b64('a'), key_version: 1 })).body.data;
    expect(v1.key_version).toBe(1);
    ok(await post('keys/v/config', { min_decryption_version: 2 }));
    const r = await post('decrypt/v', { ciphertext: v1.ciphertext });
    expect(r.status).toBe(400);
    expect(err(r)).toBe('ciphertext or signature version is disallowed by policy (too old)');
    ok(await post('keys/v/config', { min_encryption_version: 2 }));
    expect(err(await post('encrypt/v', { plaintext: b64('a'), key_version: 1 }))).toBe(
      'requested version for encryption is less than the minimum encryption key version',
    );
  });

  test('sha1 sign/verify is refused once disallow_sha1 is set on the key', async () => {
    ok(await post('keys/s1', { type: 'ecdsa-p256' }));
    const sig = ok(await post('sign/s1/sha1', { input: b64('x') })).body.data.signature;
    ok(await post('keys/s1/config', { disallow_sha1: true }));
    const s = await post('sign/s1/sha1', { input: b64('x') });
    expect(s.status).toBe(400);
    expect(err(s)).toMatch(/sha1 is disallowed/);
    expect((await post('verify/s1', { input: b64('x'), signature: sig, hash_algorithm: 'sha1' })).status).toBe(400);
    ok(await post('sign/s1', { input: b64('x') }));
  });

  test("missing keys use Vault's messages per operation", async () => {
    expect(err(await post('decrypt/none', { ciphertext: 'vault:v1:AAAA' }))).toBe('encryption key not found');
    expect(err(await post('rewrap/none', { ciphertext: 'vault:v1:AAAA' }))).toBe('encryption key not found');
    expect(err(await post('datakey/wrapped/none', {}))).toBe('encryption key not found');
    expect(err(await post('hmac/none', { input: b64('x') }))).toBe('encryption key not found');
    expect(err(await post('sign/none', { input: b64('x') }))).toBe('signing key not found');
    expect(err(await post('verify/none', { input: b64('x'), signature: 'vault:v1:AA' }))).toBe(
      'signature verification key not found',
    );
    expect((await post('decrypt/none', { ciphertext: 'vault:v1:AAAA' })).status).toBe(400);
  });

  test("input errors are 400 with Vault's words, never 500", async () => {
    ok(await post('keys/e', {}));
    expect(err(await post('encrypt/e', {}))).toBe('missing plaintext to encrypt');
    expect(err(await post('decrypt/e', {}))).toBe('missing ciphertext to decrypt');
    expect(err(await post('encrypt/e', { plaintext: b64('x'), nonce: b64('12345678') }))).toBe(
      'provided nonce not allowed for this key',
    );
    expect(err(await post('sign/e', { input: b64('x') }))).toBe('key type aes256-gcm96 does not support signing');
    expect(err(await post('encrypt/e', { batch_input: [] }))).toBe('missing batch input to process');
    expect((await post('encrypt/e', { batch_input: ['str'] })).status).toBe(400);
    expect((await post('encrypt/e', { batch_input: [{ plaintext: b64('x'), key_version: 'one' }] })).status).toBe(400);
    expect(err(await post('decrypt/e', { batch_input: [{ context: 'x' }] }))).toBe(
      "failed to parse batch input: '[0].ciphertext' missing ciphertext to decrypt",
    );
  });
});

describe('random and hash', () => {
  test('random honours URL source/bytes and format; seal is a clear 400', async () => {
    expect(Buffer.from(ok(await post('random', {})).body.data.random_bytes, 'base64').length).toBe(32);
    expect(ok(await post('random/16', { format: 'hex' })).body.data.random_bytes).toMatch(/^[0-9a-f]{32}$/);
    expect(ok(await post('random/all/8', { format: 'hex' })).body.data.random_bytes).toMatch(/^[0-9a-f]{16}$/);
    const s = await post('random/seal/8', {});
    expect(s.status).toBe(400);
    expect(err(s)).toMatch(/seal/);
    expect(err(await post('random', { bytes: 0 }))).toBe('"bytes" cannot be less than 1');
  });

  test('hash: URL algorithm wins; vector 2 sha3-256', async () => {
    const input = 'dGhlIHF1aWNrIGJyb3duIGZveA==';
    expect(ok(await post('hash/sha3-256', { input, algorithm: 'sha2-256' })).body.data.sum).toBe(
      'e4bd866ec3fa52df3b7842aa97b448bc859a7606cefcdad1715847f4b82a6c93',
    );
    expect(ok(await post('hash', { input, format: 'base64' })).body.data.sum).toBe(
      createHash('sha256').update('the quick brown fox').digest('base64'),
    );
    expect(err(await post('hash', {}))).toBe('input missing');
  });
});
