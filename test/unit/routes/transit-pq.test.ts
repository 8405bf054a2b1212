/**
 * Post-quantum transit keys through the real router and core, on Vault Enterprise's fields: ml-dsa
 * (parameter_set 44/65/87), slh-dsa and hybrid (composite ML-DSA + ECDSA/Ed25519). Every signature the
 * daemon makes is checked outside it with @noble/post-quantum over the exported public key (and the
 * hybrid's classical half with node:crypto), and a BYOK-imported NIST ACVP seed must give NIST's key.
 */
import { createHash, createPublicKey, generateKeyPairSync, sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanup, startHarness, type Answer, type Harness } from '../../support/harness.js';
import { ML_DSA, SLH_DSA } from '../../../src/engines/transit/pq/pq-params.js';
import { compositeMessage, compositeSuite } from '../../../src/engines/transit/pq/composite.js';
import { wrapForImport } from '../../../src/engines/transit/keyring/byok.js';

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
const post = (path: string, body: unknown) => d.req('POST', `transit/${path}`, body);
const sigBytes = (s: string) => Buffer.from(s.split(':')[2]!, 'base64');
const msg = Buffer.from('post-quantum transit message');

describe('ml-dsa keys', () => {
  for (const set of ['44', '65', '87'] as const) {
    test(`ML-DSA-${set}: create, read, sign (pure) verified by noble, verify, batch, rotate`, async () => {
      const name = `mldsa-${set}`;
      const created = ok(await post(`keys/${name}`, { type: 'ml-dsa', parameter_set: set })).body.data;
      expect(created.type).toBe('ml-dsa');
      expect(created.parameter_set).toBe(set);
      expect(created.supports_signing).toBe(true);
      expect(created.keys['1'].name).toBe(`ml-dsa-${set}`);
      const pub = Buffer.from(created.keys['1'].public_key, 'base64');
      expect(pub.length).toBe(ML_DSA[set].lengths.publicKey);
      const exported = ok(await d.req('GET', `transit/export/public-key/${name}/1`)).body.data.keys['1'];
      expect(Buffer.from(exported, 'base64').equals(pub)).toBe(true);

      const s = ok(await post(`sign/${name}`, { input: b64(msg) })).body.data;
      expect(s.signature).toMatch(/^vault:v1:/);
      expect(s.key_version).toBe(1);
      expect(sigBytes(s.signature).length).toBe(ML_DSA[set].lengths.signature);
      expect(ML_DSA[set].verify(sigBytes(s.signature), msg, pub)).toBe(true);
      expect(ok(await post(`verify/${name}`, { input: b64(msg), signature: s.signature })).body.data.valid).toBe(true);
      expect(ok(await post(`verify/${name}`, { input: b64('other'), signature: s.signature })).body.data.valid).toBe(
        false,
      );

      // batch: order kept, per-item errors
      const batch = ok(
        await post(`sign/${name}`, { batch_input: [{ input: b64('a') }, { input: b64('b') }, { context: '' }] }),
      ).body.data.batch_results;
      expect(batch).toHaveLength(3);
      expect(ML_DSA[set].verify(sigBytes(batch[0].signature), Buffer.from('a'), pub)).toBe(true);
      expect(ML_DSA[set].verify(sigBytes(batch[1].signature), Buffer.from('b'), pub)).toBe(true);
      expect(batch[2].error).toBe('missing input');
      const vb = ok(
        await post(`verify/${name}`, {
          batch_input: [
            { input: b64('a'), signature: batch[0].signature },
            { input: b64('a'), signature: batch[1].signature },
          ],
        }),
      ).body.data.batch_results;
      expect(vb.map((r: { valid: boolean }) => r.valid)).toEqual([true, false]);

      // rotate: v2 signs, v1 signatures still verify
      ok(await post(`keys/${name}/rotate`, {}));
      const s2 = ok(await post(`sign/${name}`, { input: b64(msg) })).body.data;
      expect(s2.signature).toMatch(/^vault:v2:/);
      const read = ok(await d.req('GET', `transit/keys/${name}`)).body.data;
      const pub2 = Buffer.from(read.keys['2'].public_key, 'base64');
      expect(pub2.equals(pub)).toBe(false);
      expect(ML_DSA[set].verify(sigBytes(s2.signature), msg, pub2)).toBe(true);
      expect(ok(await post(`verify/${name}`, { input: b64(msg), signature: s.signature })).body.data.valid).toBe(true);
    });
  }

  test('prehashed selects HashML-DSA over the given digest; weak or wrong digests are 400s naming the field', async () => {
    ok(await post('keys/mldsa-pre', { type: 'ml-dsa', parameter_set: '65' }));
    const pub = Buffer.from(ok(await d.req('GET', 'transit/keys/mldsa-pre')).body.data.keys['1'].public_key, 'base64');
    const digest = createHash('sha512').update(msg).digest();
    const s = ok(await post('sign/mldsa-pre/sha2-512', { input: b64(digest), prehashed: true })).body.data.signature;
    const { sha512 } = await import('@noble/hashes/sha2.js');
    expect(ML_DSA['65'].prehash(sha512).verify(sigBytes(s), msg, pub)).toBe(true);
    expect(ML_DSA['65'].verify(sigBytes(s), msg, pub)).toBe(false);
    expect(
      ok(await post('verify/mldsa-pre/sha2-512', { input: b64(digest), prehashed: true, signature: s })).body.data
        .valid,
    ).toBe(true);
    expect(ok(await post('verify/mldsa-pre', { input: b64(msg), signature: s })).body.data.valid).toBe(false);
    const weak = await post('sign/mldsa-pre/sha2-256', {
      input: b64(createHash('sha256').update(msg).digest()),
      prehashed: true,
    });
    expect(weak.status).toBe(400);
    expect(err(weak)).toMatch(/hash_algorithm.*too weak/);
    const short = await post('sign/mldsa-pre/sha2-512', { input: b64('abc'), prehashed: true });
    expect(short.status).toBe(400);
    expect(err(short)).toMatch(/input.*64 bytes/);
  });

  test('bad parameter sets and fields are 400s naming the field', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ type: 'ml-dsa' }, /parameter_set.*invalid parameter set/],
      [{ type: 'ml-dsa', parameter_set: '128' }, /parameter_set.*invalid parameter set 128 for key type ml-dsa/],
      [{ type: 'slh-dsa', parameter_set: '65' }, /parameter_set.*slh-dsa/],
      [{ type: 'hybrid', parameter_set: '65', hybrid_key_type_ec: 'ecdsa-p256' }, /hybrid_key_type_pqc/],
      [
        { type: 'hybrid', parameter_set: '65', hybrid_key_type_pqc: 'ml-dsa', hybrid_key_type_ec: 'rsa-2048' },
        /hybrid_key_type_ec/,
      ],
      [{ type: 'aes256-gcm96', parameter_set: '65' }, /parameter_set is not valid/],
      [{ type: 'ml-dsa', parameter_set: '65', derived: true }, /derived/],
    ];
    for (const [body, re] of cases) {
      const r = await post('keys/bad-pq', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(err(r)).toMatch(re);
    }
    expect((await d.req('GET', 'transit/keys/bad-pq')).status).toBe(404);
  });

  test('backup/restore keeps the parameter set and the seed; signing-key export is the seed', async () => {
    ok(
      await post('keys/mldsa-bk', {
        type: 'ml-dsa',
        parameter_set: '44',
        exportable: true,
        allow_plaintext_backup: true,
      }),
    );
    const seed = Buffer.from(
      ok(await d.req('GET', 'transit/export/signing-key/mldsa-bk/1')).body.data.keys['1'],
      'base64',
    );
    expect(seed.length).toBe(32);
    const pub = Buffer.from(ok(await d.req('GET', 'transit/keys/mldsa-bk')).body.data.keys['1'].public_key, 'base64');
    expect(Buffer.from(ML_DSA['44'].keygen(seed).publicKey).equals(pub)).toBe(true);
    const backup = ok(await d.req('GET', 'transit/backup/mldsa-bk')).body.data.backup as string;
    const policy = JSON.parse(Buffer.from(backup, 'base64').toString('utf8')).policy;
    expect(policy.type).toBe(14);
    expect(policy.ParameterSet).toBe('44');
    ok(await post('restore/mldsa-bk2', { backup }), 204);
    const r = ok(await d.req('GET', 'transit/keys/mldsa-bk2')).body.data;
    expect(r.parameter_set).toBe('44');
    expect(r.keys['1'].public_key).toBe(pub.toString('base64'));
    const s = ok(await post('sign/mldsa-bk2', { input: b64(msg) })).body.data.signature;
    expect(ok(await post('verify/mldsa-bk', { input: b64(msg), signature: s })).body.data.valid).toBe(true);
  });

  test("BYOK import of a NIST ACVP seed gives NIST's public key", async () => {
    const v = JSON.parse(readFileSync(new URL('../../vectors/ml-dsa-acvp.json', import.meta.url), 'utf8')).keyGen.find(
      (t: { parameterSet: string }) => t.parameterSet === 'ML-DSA-65',
    );
    const wrapPub = createPublicKey(ok(await d.req('GET', 'transit/wrapping_key')).body.data.public_key);
    const ciphertext = wrapForImport(wrapPub, Buffer.from(v.seed, 'hex')).toString('base64');
    ok(await post('keys/mldsa-byok/import', { type: 'ml-dsa', parameter_set: '65', ciphertext }), 204);
    const r = ok(await d.req('GET', 'transit/keys/mldsa-byok')).body.data;
    expect(r.imported_key).toBe(true);
    expect(Buffer.from(r.keys['1'].public_key, 'base64').toString('hex').toUpperCase()).toBe(v.pk);
    const s = ok(await post('sign/mldsa-byok', { input: b64(msg) })).body.data.signature;
    expect(ML_DSA['65'].verify(sigBytes(s), msg, Buffer.from(v.pk, 'hex'))).toBe(true);
    const short = await post('keys/mldsa-byok2/import', {
      type: 'ml-dsa',
      parameter_set: '65',
      ciphertext: wrapForImport(wrapPub, Buffer.alloc(31, 1)).toString('base64'),
    });
    expect(short.status).toBe(400);
    expect(err(short)).toMatch(/ciphertext.*32-byte seed/);
  });

  test('JWKS (kty AKP, alg ML-DSA-65) and JWTs signed with ML-DSA, verified outside keyhold and by jwt/verify', async () => {
    ok(await post('keys/mldsa-jwt', { type: 'ml-dsa', parameter_set: '65' }));
    const pub = Buffer.from(ok(await d.req('GET', 'transit/keys/mldsa-jwt')).body.data.keys['1'].public_key, 'base64');
    const jwks = ok(await d.req('GET', 'transit/jwks/mldsa-jwt')).body;
    expect(jwks.keys).toHaveLength(1);
    const jwk = jwks.keys[0];
    expect(jwk).toMatchObject({ kty: 'AKP', alg: 'ML-DSA-65', use: 'sig' });
    expect(Buffer.from(jwk.pub, 'base64url').equals(pub)).toBe(true);
    expect(jwk.kid).toBe(
      createHash('sha256')
        .update(JSON.stringify({ alg: 'ML-DSA-65', kty: 'AKP', pub: jwk.pub }))
        .digest('base64url'),
    );
    const token = ok(await post('jwt/sign/mldsa-jwt', { claims: { sub: 'pq' } })).body.data.token as string;
    const [h, p, s] = token.split('.');
    expect(JSON.parse(Buffer.from(h!, 'base64url').toString())).toMatchObject({ alg: 'ML-DSA-65', kid: jwk.kid });
    expect(ML_DSA['65'].verify(Buffer.from(s!, 'base64url'), Buffer.from(`${h}.${p}`), pub)).toBe(true);
    expect(ok(await post('jwt/verify/mldsa-jwt', { token })).body.data.valid).toBe(true);
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'other' })).toString('base64url')}.${s}`;
    expect(ok(await post('jwt/verify/mldsa-jwt', { token: forged })).body.data.valid).toBe(false);
  });

  test('CSR and certificate chains are refused for post-quantum keys (400 naming the key)', async () => {
    ok(await post('keys/mldsa-csr', { type: 'ml-dsa', parameter_set: '44' }));
    const r = await post('keys/mldsa-csr/csr', {});
    expect(r.status).toBe(400);
    expect(err(r)).toMatch(/not supported for ml-dsa/);
  });

  test('soft-deleted post-quantum keys refuse signing', async () => {
    ok(await post('keys/mldsa-sd', { type: 'ml-dsa', parameter_set: '44' }));
    ok(await post('keys/mldsa-sd/soft-delete', {}));
    expect((await post('sign/mldsa-sd', { input: b64(msg) })).status).toBe(400);
  });
});

describe('slh-dsa keys', () => {
  for (const set of ['slh-dsa-sha2-128f', 'slh-dsa-shake-128f'] as const) {
    test(`${set}: sign verified by noble, verify, backup/restore, prehashed HashSLH-DSA`, async () => {
      const name = `slh-${set}`;
      const created = ok(
        await post(`keys/${name}`, {
          type: 'slh-dsa',
          parameter_set: set,
          exportable: true,
          allow_plaintext_backup: true,
        }),
      ).body.data;
      expect(created.parameter_set).toBe(set);
      expect(created.keys['1'].name).toBe(set);
      const pub = Buffer.from(created.keys['1'].public_key, 'base64');
      expect(pub.length).toBe(32);
      const s = ok(await post(`sign/${name}`, { input: b64(msg) })).body.data.signature;
      expect(SLH_DSA[set].verify(sigBytes(s), msg, pub)).toBe(true);
      expect(ok(await post(`verify/${name}`, { input: b64(msg), signature: s })).body.data.valid).toBe(true);
      expect(ok(await post(`verify/${name}`, { input: b64('x'), signature: s })).body.data.valid).toBe(false);
      const { sha256 } = await import('@noble/hashes/sha2.js');
      const ps = ok(
        await post(`sign/${name}/sha2-256`, { input: b64(createHash('sha256').update(msg).digest()), prehashed: true }),
      ).body.data.signature;
      expect(SLH_DSA[set].prehash(sha256).verify(sigBytes(ps), msg, pub)).toBe(true);
      const backup = ok(await d.req('GET', `transit/backup/${name}`)).body.data.backup as string;
      ok(await post(`restore/${name}-r`, { backup }), 204);
      expect(ok(await d.req('GET', `transit/keys/${name}-r`)).body.data.keys['1'].public_key).toBe(
        pub.toString('base64'),
      );
    });
  }
});

describe('hybrid keys (composite ML-DSA + classical)', () => {
  for (const [set, ec] of [
    ['44', 'ecdsa-p256'],
    ['65', 'ecdsa-p384'],
    ['87', 'ecdsa-p521'],
    ['65', 'ed25519'],
  ] as const) {
    test(`ML-DSA-${set} + ${ec}: both halves verify outside keyhold; tampering either half fails; backup/restore`, async () => {
      const name = `hyb-${set}-${ec}`;
      const created = ok(
        await post(`keys/${name}`, {
          type: 'hybrid',
          parameter_set: set,
          hybrid_key_type_pqc: 'ml-dsa',
          hybrid_key_type_ec: ec,
          exportable: true,
          allow_plaintext_backup: true,
        }),
      ).body.data;
      expect(created).toMatchObject({
        type: 'hybrid',
        parameter_set: set,
        hybrid_key_type_pqc: 'ml-dsa',
        hybrid_key_type_ec: ec,
      });
      const mlPub = Buffer.from(created.keys['1'].public_key, 'base64');
      const tradText = created.keys['1'].hybrid_public_key as string;
      const tradPub =
        ec === 'ed25519'
          ? createPublicKey({
              key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(tradText, 'base64').toString('base64url') },
              format: 'jwk',
            })
          : createPublicKey(tradText);
      const composite = Buffer.from(
        ok(await d.req('GET', `transit/export/public-key/${name}`)).body.data.keys['1'],
        'base64',
      );
      expect(composite.subarray(0, mlPub.length).equals(mlPub)).toBe(true);

      const s = sigBytes(ok(await post(`sign/${name}`, { input: b64(msg) })).body.data.signature);
      const n = ML_DSA[set].lengths.signature!;
      const m = compositeMessage(set, ec, msg);
      const { label } = compositeSuite(set, ec);
      expect(ML_DSA[set].verify(s.subarray(0, n), m, mlPub, { context: label })).toBe(true);
      const hash =
        ec === 'ed25519' ? null : { 'ecdsa-p256': 'sha256', 'ecdsa-p384': 'sha384', 'ecdsa-p521': 'sha512' }[ec];
      expect(nodeVerify(hash, m, tradPub, s.subarray(n))).toBe(true);
      const sig = `vault:v1:${s.toString('base64')}`;
      expect(ok(await post(`verify/${name}`, { input: b64(msg), signature: sig })).body.data.valid).toBe(true);
      // a signature whose classical half comes from another key fails, as does a damaged ML-DSA half
      const other =
        ec === 'ed25519'
          ? generateKeyPairSync('ed25519').privateKey
          : generateKeyPairSync('ec', {
              namedCurve: { 'ecdsa-p256': 'P-256', 'ecdsa-p384': 'P-384', 'ecdsa-p521': 'P-521' }[ec],
            }).privateKey;
      const forged = Buffer.concat([s.subarray(0, n), nodeSign(hash, m, other)]);
      expect(
        ok(await post(`verify/${name}`, { input: b64(msg), signature: `vault:v1:${forged.toString('base64')}` })).body
          .data.valid,
      ).toBe(false);
      const damaged = Buffer.from(s);
      damaged[10]! ^= 1;
      expect(
        ok(await post(`verify/${name}`, { input: b64(msg), signature: `vault:v1:${damaged.toString('base64')}` })).body
          .data.valid,
      ).toBe(false);
      expect(
        (await post(`sign/${name}`, { input: b64(createHash('sha256').update(msg).digest()), prehashed: true })).status,
      ).toBe(400);

      const backup = ok(await d.req('GET', `transit/backup/${name}`)).body.data.backup as string;
      ok(await post(`restore/${name}-r`, { backup }), 204);
      const r = ok(await d.req('GET', `transit/keys/${name}-r`)).body.data;
      expect(r.hybrid_key_type_ec).toBe(ec);
      expect(r.keys['1'].public_key).toBe(created.keys['1'].public_key);
      expect(r.keys['1'].hybrid_public_key).toBe(tradText);
      const s2 = ok(await post(`sign/${name}-r`, { input: b64(msg) })).body.data.signature;
      expect(ok(await post(`verify/${name}`, { input: b64(msg), signature: s2 })).body.data.valid).toBe(true);
    });
  }

  test('BYOK import of seed + classical PKCS#8', async () => {
    const seed = Buffer.alloc(32, 9);
    const ecPriv = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const wrapPub = createPublicKey(ok(await d.req('GET', 'transit/wrapping_key')).body.data.public_key);
    const material = Buffer.concat([seed, Buffer.from(ecPriv.export({ format: 'der', type: 'pkcs8' }))]);
    ok(
      await post('keys/hyb-byok/import', {
        type: 'hybrid',
        parameter_set: '44',
        hybrid_key_type_pqc: 'ml-dsa',
        hybrid_key_type_ec: 'ecdsa-p256',
        ciphertext: wrapForImport(wrapPub, material).toString('base64'),
      }),
      204,
    );
    const r = ok(await d.req('GET', 'transit/keys/hyb-byok')).body.data;
    expect(Buffer.from(r.keys['1'].public_key, 'base64').equals(Buffer.from(ML_DSA['44'].keygen(seed).publicKey))).toBe(
      true,
    );
    expect(createPublicKey(r.keys['1'].hybrid_public_key).export({ format: 'jwk' }).x).toBe(
      createPublicKey(ecPriv).export({ format: 'jwk' }).x,
    );
    const wrongCurve = Buffer.concat([
      seed,
      Buffer.from(
        generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'der', type: 'pkcs8' }),
      ),
    ]);
    const bad = await post('keys/hyb-byok2/import', {
      type: 'hybrid',
      parameter_set: '44',
      hybrid_key_type_pqc: 'ml-dsa',
      hybrid_key_type_ec: 'ecdsa-p256',
      ciphertext: wrapForImport(wrapPub, wrongCurve).toString('base64'),
    });
    expect(bad.status).toBe(400);
    expect(err(bad)).toMatch(/ciphertext.*ecdsa-p256/);
  });
});
