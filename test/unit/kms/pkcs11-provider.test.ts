/**
 * The PKCS#11 provider in-process against SoftHSM2 (src/kms, built worker in dist/): one login per
 * token for many keys, at most max_parallel operations of a key in flight, a key configured with
 * another PIN refused, signatures cross-checked with @noble/curves and node:crypto.
 */
import { createDecipheriv, createHash, createVerify, constants, randomBytes, verify as nodeVerify } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { p256 } from '@noble/curves/nist.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOFTHSM_MODULE, createSoftHsm, softhsmMissing, type SoftHsm } from '../../support/softhsm.js';

const missing = softhsmMissing();

describe.skipIf(missing !== null)('kms pkcs11 provider (SoftHSM2)', () => {
  let hsm: SoftHsm;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let kms: any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let lib: any;

  beforeAll(async () => {
    hsm = createSoftHsm();
    hsm.initToken('unit', '1111');
    process.env.SOFTHSM2_CONF = hsm.conf;
    kms = await import('../../../dist/kms/index.js');
    lib = new kms.Pkcs11Library('softhsm', SOFTHSM_MODULE);
  });
  afterAll(async () => {
    await lib?.close();
    hsm?.cleanup();
  });

  it('logs in once per token for several keys and bounds a key to max_parallel operations in flight', async () => {
    const rsa = await kms.openPkcs11Key({
      library: lib,
      tokenLabel: 'unit',
      pin: '1111',
      keyLabel: 'r',
      mechanism: '0x0001',
      keyBits: 2048,
      generate: true,
      maxParallel: 2,
    });
    const ec = await kms.openPkcs11Key({
      library: lib,
      tokenLabel: 'unit',
      pin: '1111',
      keyLabel: 'e',
      mechanism: '0x1041',
      curve: 'P256',
      generate: true,
    });
    const aes = await kms.openPkcs11Key({
      library: lib,
      tokenLabel: 'unit',
      pin: '1111',
      keyLabel: 'a',
      mechanism: '0x1087',
      generate: true,
      maxParallel: 4,
    });
    const digest = createHash('sha256').update('m').digest();
    const before = await lib.stats();
    const sigs: Buffer[] = await Promise.all(Array.from({ length: 12 }, () => rsa.sign(digest, { hash: 'sha256' })));
    const afterRsa = await lib.stats();
    expect(afterRsa.logins).toBe(1);
    // 12 concurrent signs, max_parallel 2: never more than 2 in the token at once.
    expect(afterRsa.maxInFlight).toBeLessThanOrEqual(2);
    expect(afterRsa.maxInFlight).toBe(2);
    expect(before.maxInFlight).toBeLessThanOrEqual(1);
    for (const s of sigs) {
      // Independent check: node:crypto verifies PKCS#1 v1.5 over the message.
      expect(createVerify('sha256').update('m').verify(rsa.publicKey(), s)).toBe(true);
    }
    const es = await ec.sign(digest, { hash: 'sha256' });
    const pub = ec.publicKey().export({ format: 'jwk' });
    const point = Buffer.concat([Buffer.from([4]), Buffer.from(pub.x, 'base64url'), Buffer.from(pub.y, 'base64url')]);
    expect(p256.verify(es, digest, point, { prehash: false, format: 'der', lowS: false })).toBe(true);
    expect(nodeVerify('sha256', Buffer.from('m'), { key: ec.publicKey(), dsaEncoding: 'der' }, es)).toBe(true);
    const pss = await rsa.sign(digest, { hash: 'sha256', padding: 'pss' });
    expect(
      nodeVerify(
        'sha256',
        Buffer.from('m'),
        { key: rsa.publicKey(), padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
        pss,
      ),
    ).toBe(true);
    const cts = await Promise.all(Array.from({ length: 8 }, (_, i) => aes.wrap(Buffer.from(`secret ${i}`))));
    const pts = await Promise.all(cts.map((c: Buffer) => aes.unwrap(c)));
    expect(pts.map((p: Buffer) => p.toString())).toEqual(Array.from({ length: 8 }, (_, i) => `secret ${i}`));
    expect((await lib.stats()).logins).toBe(1);
    await Promise.all([rsa.close(), ec.close(), aes.close()]);
  });

  it('refuses a key configured with another PIN than the token is logged in with (no riding on the login)', async () => {
    const ok = await kms.openPkcs11Key({
      library: lib,
      tokenLabel: 'unit',
      pin: '1111',
      keyLabel: 'r',
      mechanism: '0x0001',
    });
    await expect(
      kms.openPkcs11Key({ library: lib, tokenLabel: 'unit', pin: '9999', keyLabel: 'r', mechanism: '0x0001' }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/CKR_PIN_INCORRECT/) });
    await ok.close();
  });

  it('libraries of the same module share one worker (one C_Initialize, one login), so a wrong PIN cannot ride on it', async () => {
    const other = new kms.Pkcs11Library('seal', SOFTHSM_MODULE);
    try {
      const a = await kms.openPkcs11Key({
        library: lib,
        tokenLabel: 'unit',
        pin: '1111',
        keyLabel: 'r',
        mechanism: '0x0001',
      });
      await expect(
        kms.openPkcs11Key({ library: other, tokenLabel: 'unit', pin: '0000', keyLabel: 'r', mechanism: '0x0001' }),
      ).rejects.toMatchObject({
        status: 400,
        message: expect.stringMatching(/^pkcs11 library "seal": .*CKR_PIN_INCORRECT/),
      });
      const b = await kms.openPkcs11Key({
        library: other,
        tokenLabel: 'unit',
        pin: '1111',
        keyLabel: 'a',
        mechanism: '0x1087',
      });
      expect((await other.stats()).logins).toBe(1);
      expect(await other.stats()).toEqual(await lib.stats());
      await Promise.all([a.close(), b.close()]);
    } finally {
      await other.close();
    }
    // The first library still works after the second handle closed.
    expect((await lib.stats()).logins).toBe(1);
  });

  it('AES-GCM through the shared rings: thousands of calls in flight wrap both rings; every answer checks out with node:crypto; large ones go by message', async () => {
    // A known key written into the token, so node:crypto can check each ciphertext independently.
    const known = randomBytes(32);
    writeFileSync(join(hsm.dir, 'ring.key'), known);
    hsm.tool([
      '--token-label',
      'unit',
      '--login',
      '--pin',
      '1111',
      '--write-object',
      join(hsm.dir, 'ring.key'),
      '--type',
      'secrkey',
      '--key-type',
      'AES:32',
      '--label',
      'ring',
      '--id',
      '5151',
      '--usage-decrypt',
    ]);
    const aes = await kms.openPkcs11Key({
      library: lib,
      tokenLabel: 'unit',
      pin: '1111',
      keyLabel: 'ring',
      mechanism: '0x1087',
      maxParallel: 16,
      // The worker's rings are under test here, not the same-thread path (pkcs11-inline.test.ts).
      inlineMaxMicros: 0,
    });
    const open = (ct: Buffer, aad?: Buffer): Buffer => {
      const d = createDecipheriv('aes-256-gcm', known, ct.subarray(0, 12));
      if (aad) d.setAAD(aad);
      d.setAuthTag(ct.subarray(ct.length - 16));
      return Buffer.concat([d.update(ct.subarray(12, ct.length - 16)), d.final()]);
    };
    // ~3,000 calls of up to 3 KB: several times the 1 MiB request and result rings.
    const inputs = Array.from({ length: 3000 }, (_, i) => ({
      pt: randomBytes(i % 7 === 0 ? 0 : (i * 37) % 3000),
      aad: i % 3 === 0 ? randomBytes(i % 50) : undefined,
    }));
    const ringBefore = (await lib.stats()).ringRequests;
    const cts: Buffer[] = await Promise.all(inputs.map((x) => aes.encrypt(x.pt, { aad: x.aad })));
    // They went through the ring, not by message.
    expect((await lib.stats()).ringRequests - ringBefore).toBe(inputs.length);
    cts.forEach((ct, i) => {
      expect(ct).toHaveLength(12 + inputs[i]!.pt.length + 16);
      expect(open(ct, inputs[i]!.aad).equals(inputs[i]!.pt)).toBe(true);
    });
    // IVs come from the token's RNG: all distinct.
    expect(new Set(cts.map((c) => c.subarray(0, 12).toString('hex'))).size).toBe(cts.length);
    const pts: Buffer[] = await Promise.all(cts.map((ct, i) => aes.decrypt(ct, { aad: inputs[i]!.aad })));
    pts.forEach((pt, i) => expect(pt.equals(inputs[i]!.pt)).toBe(true));
    // Larger than a ring frame may be (a quarter of the ring): by message, same results.
    const big = randomBytes(600_000);
    const bigCt: Buffer = await aes.encrypt(big);
    expect(open(bigCt).equals(big)).toBe(true);
    expect((await aes.decrypt(bigCt)).equals(big)).toBe(true);
    // A caller's IV is used as given; a tampered ciphertext fails the tag check (400), the worker keeps serving.
    const iv = Buffer.alloc(12, 9);
    const withIv: Buffer = await aes.encrypt(Buffer.from('x'), { iv });
    expect(withIv.subarray(0, 12).equals(iv)).toBe(true);
    const bad = Buffer.from(cts[1]!);
    bad[bad.length - 1]! ^= 1;
    await expect(aes.decrypt(bad)).rejects.toMatchObject({ status: 400 });
    expect((await aes.decrypt(withIv)).toString()).toBe('x');
    expect((await lib.stats()).maxInFlight).toBeLessThanOrEqual(16);
    // A full request ring (64 frames of 200 KB in flight > 1 MiB): the overflow goes by message.
    const wide = await kms.openPkcs11Key({
      library: lib,
      tokenLabel: 'unit',
      pin: '1111',
      keyLabel: 'ring',
      mechanism: '0x1087',
      maxParallel: 64,
      inlineMaxMicros: 0,
    });
    const fat = Array.from({ length: 64 }, () => randomBytes(200_000));
    const before = (await lib.stats()).ringRequests;
    const fatCts: Buffer[] = await Promise.all(fat.map((pt) => wide.encrypt(pt)));
    fatCts.forEach((ct, i) => expect(open(ct).equals(fat[i]!)).toBe(true));
    const ringUsed = (await lib.stats()).ringRequests - before;
    expect(ringUsed).toBeGreaterThan(0);
    expect(ringUsed).toBeLessThan(64);
    await Promise.all([aes.close(), wide.close()]);
  });

  it('refuses a mechanism that does not fit the key, and unknown mechanisms', async () => {
    await expect(
      kms.openPkcs11Key({ library: lib, tokenLabel: 'unit', pin: '1111', keyLabel: 'a', mechanism: '0x0001' }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/CKM_RSA_PKCS needs an RSA key/) });
    await expect(
      kms.openPkcs11Key({ library: lib, tokenLabel: 'unit', pin: '1111', keyLabel: 'a', mechanism: 'CKM_MD5' }),
    ).rejects.toMatchObject({ status: 400 });
  });
});
