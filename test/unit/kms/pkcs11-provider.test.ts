/**
 * The PKCS#11 provider in-process against SoftHSM2 (src/kms, built worker in dist/): one login per
 * token for many keys, at most max_parallel operations of a key in flight, a key configured with
 * another PIN refused, signatures cross-checked with @noble/curves and node:crypto.
 */
import { createHash, createVerify, constants, verify as nodeVerify } from 'node:crypto';
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
    const rsa = await kms.openPkcs11Key({ library: lib, tokenLabel: 'unit', pin: '1111', keyLabel: 'r', mechanism: '0x0001', keyBits: 2048, generate: true, maxParallel: 2 });
    const ec = await kms.openPkcs11Key({ library: lib, tokenLabel: 'unit', pin: '1111', keyLabel: 'e', mechanism: '0x1041', curve: 'P256', generate: true });
    const aes = await kms.openPkcs11Key({ library: lib, tokenLabel: 'unit', pin: '1111', keyLabel: 'a', mechanism: '0x1087', generate: true, maxParallel: 4 });
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
    expect(nodeVerify('sha256', Buffer.from('m'), { key: rsa.publicKey(), padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, pss)).toBe(true);
    const cts = await Promise.all(Array.from({ length: 8 }, (_, i) => aes.wrap(Buffer.from(`secret ${i}`))));
    const pts = await Promise.all(cts.map((c: Buffer) => aes.unwrap(c)));
    expect(pts.map((p: Buffer) => p.toString())).toEqual(Array.from({ length: 8 }, (_, i) => `secret ${i}`));
    expect((await lib.stats()).logins).toBe(1);
    await Promise.all([rsa.close(), ec.close(), aes.close()]);
  });

  it('refuses a key configured with another PIN than the token is logged in with (no riding on the login)', async () => {
    const ok = await kms.openPkcs11Key({ library: lib, tokenLabel: 'unit', pin: '1111', keyLabel: 'r', mechanism: '0x0001' });
    await expect(kms.openPkcs11Key({ library: lib, tokenLabel: 'unit', pin: '9999', keyLabel: 'r', mechanism: '0x0001' })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/CKR_PIN_INCORRECT/) });
    await ok.close();
  });

  it('libraries of the same module share one worker (one C_Initialize, one login), so a wrong PIN cannot ride on it', async () => {
    const other = new kms.Pkcs11Library('seal', SOFTHSM_MODULE);
    try {
      const a = await kms.openPkcs11Key({ library: lib, tokenLabel: 'unit', pin: '1111', keyLabel: 'r', mechanism: '0x0001' });
      await expect(kms.openPkcs11Key({ library: other, tokenLabel: 'unit', pin: '0000', keyLabel: 'r', mechanism: '0x0001' })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^pkcs11 library "seal": .*CKR_PIN_INCORRECT/) });
      const b = await kms.openPkcs11Key({ library: other, tokenLabel: 'unit', pin: '1111', keyLabel: 'a', mechanism: '0x1087' });
      expect((await other.stats()).logins).toBe(1);
      expect(await other.stats()).toEqual(await lib.stats());
      await Promise.all([a.close(), b.close()]);
    } finally {
      await other.close();
    }
    // The first library still works after the second handle closed.
    expect((await lib.stats()).logins).toBe(1);
  });

  it('refuses a mechanism that does not fit the key, and unknown mechanisms', async () => {
    await expect(kms.openPkcs11Key({ library: lib, tokenLabel: 'unit', pin: '1111', keyLabel: 'a', mechanism: '0x0001' })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/CKM_RSA_PKCS needs an RSA key/) });
    await expect(kms.openPkcs11Key({ library: lib, tokenLabel: 'unit', pin: '1111', keyLabel: 'a', mechanism: 'CKM_MD5' })).rejects.toMatchObject({ status: 400 });
  });
});
