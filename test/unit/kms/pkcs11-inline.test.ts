/**
 * The same-thread AES-GCM path for fast tokens (src/kms/pkcs11/inline-gcm.ts) against SoftHSM2: a
 * key the worker measured as fast answers on the calling thread with the same bytes node:crypto
 * makes; a slow measurement, a 0 limit, large payloads and a busy max_parallel keep calls with the
 * worker; a failed tag check is still a 400; a token that goes away and comes back (the worker
 * finalizes the module behind the gate) is recovered without a restart, then the key is inline again.
 */
import { createDecipheriv, randomBytes } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOFTHSM_MODULE, createSoftHsm, softhsmMissing, type SoftHsm } from '../../support/softhsm.js';

const missing = softhsmMissing();

describe.skipIf(missing !== null)('kms pkcs11 same-thread AES-GCM (SoftHSM2)', () => {
  let hsm: SoftHsm;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let kms: any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let lib: any;
  const known = randomBytes(32);
  const open = (ct: Buffer, aad?: Buffer): Buffer => {
    const d = createDecipheriv('aes-256-gcm', known, ct.subarray(0, 12));
    if (aad) d.setAAD(aad);
    d.setAuthTag(ct.subarray(ct.length - 16));
    return Buffer.concat([d.update(ct.subarray(12, ct.length - 16)), d.final()]);
  };
  const key = (extra: Record<string, unknown> = {}) =>
    kms.openPkcs11Key({
      library: lib,
      tokenLabel: 'inl',
      pin: '4321',
      keyLabel: 'known',
      mechanism: 'CKM_AES_GCM',
      maxParallel: 4,
      ...extra,
    });

  beforeAll(async () => {
    hsm = createSoftHsm();
    hsm.initToken('inl', '4321');
    process.env.SOFTHSM2_CONF = hsm.conf;
    // A known key written into the token, so node:crypto checks each answer independently.
    writeFileSync(join(hsm.dir, 'known.key'), known);
    hsm.tool([
      '--token-label',
      'inl',
      '--login',
      '--pin',
      '4321',
      '--write-object',
      join(hsm.dir, 'known.key'),
      '--type',
      'secrkey',
      '--key-type',
      'AES:32',
      '--label',
      'known',
      '--id',
      '4242',
      '--usage-decrypt',
    ]);
    kms = await import('../../../dist/kms/index.js');
    lib = new kms.Pkcs11Library('softhsm', SOFTHSM_MODULE);
  });
  afterAll(async () => {
    await lib?.close();
    hsm?.cleanup();
  });

  it('a key measured fast answers on the calling thread: node:crypto opens every ciphertext, no ring traffic', async () => {
    // A generous limit: the test checks the path, not this machine's speed (the default is 50 us).
    const k = await key({ inlineMaxMicros: 10_000 });
    expect(k.inline.active).toBe(true);
    expect(k.inline.measuredMicros).toBeGreaterThan(0);
    const ring0 = (await lib.stats()).ringRequests;
    const inputs = Array.from({ length: 300 }, (_, i) => ({
      pt: randomBytes(i % 5 === 0 ? 0 : (i * 13) % 4000),
      aad: i % 2 ? randomBytes(i % 40) : undefined,
    }));
    const cts: Buffer[] = await Promise.all(inputs.map((x) => k.encrypt(x.pt, { aad: x.aad })));
    cts.forEach((ct, i) => expect(open(ct, inputs[i]!.aad).equals(inputs[i]!.pt)).toBe(true));
    // IVs from the token's RNG, all distinct.
    expect(new Set(cts.map((c) => c.subarray(0, 12).toString('hex'))).size).toBe(cts.length);
    const pts: Buffer[] = await Promise.all(cts.map((ct, i) => k.decrypt(ct, { aad: inputs[i]!.aad })));
    pts.forEach((pt, i) => expect(pt.equals(inputs[i]!.pt)).toBe(true));
    expect(k.inline.answered).toBe(600);
    expect((await lib.stats()).ringRequests).toBe(ring0);
    // A caller's IV is used as given.
    const iv = Buffer.alloc(12, 3);
    const withIv: Buffer = await k.encrypt(Buffer.from('iv'), { iv });
    expect(withIv.subarray(0, 12).equals(iv)).toBe(true);
    expect(open(withIv).toString()).toBe('iv');
    // Larger than 4 KiB: the worker does it (through the ring), same format.
    const big = randomBytes(10_000);
    const bigCt: Buffer = await k.encrypt(big);
    expect(open(bigCt).equals(big)).toBe(true);
    expect((await lib.stats()).ringRequests).toBe(ring0 + 1);
    // A failed tag check is made again by the worker and is the same 400; the key stays inline.
    const bad = Buffer.from(cts[3]!);
    bad[bad.length - 1]! ^= 1;
    const before = k.inline.answered;
    await expect(k.decrypt(bad)).rejects.toMatchObject({ status: 400 });
    expect(k.inline.active).toBe(true);
    expect((await k.decrypt(withIv)).toString()).toBe('iv');
    expect(k.inline.answered).toBe(before + 1);
    await k.close();
  });

  it('a slow measurement or a 0 limit keeps every call with the worker; so does a full max_parallel', async () => {
    const slow = await key({ inlineMaxMicros: 0.001 });
    expect(slow.inline.active).toBe(false);
    expect(slow.inline.measuredMicros).toBeGreaterThan(0.001);
    const off = await key({ inlineMaxMicros: 0 });
    expect(off.inline).toBeNull();
    const ring0 = (await lib.stats()).ringRequests;
    const cts: Buffer[] = await Promise.all([slow.encrypt(Buffer.from('a')), off.encrypt(Buffer.from('b'))]);
    expect(cts.map((c) => open(c).toString())).toEqual(['a', 'b']);
    expect((await lib.stats()).ringRequests).toBe(ring0 + 2);
    expect(slow.inline.answered).toBe(0);
    // max_parallel 1 and one call with the worker: the next small call waits for the slot, in the worker too.
    const one = await key({ inlineMaxMicros: 10_000, maxParallel: 1 });
    expect(one.inline.active).toBe(true);
    const big = one.encrypt(randomBytes(8000));
    const small = one.encrypt(Buffer.from('c'));
    expect(open(await big)).toHaveLength(8000);
    expect(open(await small).toString()).toBe('c');
    expect(one.inline.answered).toBe(0);
    expect(open(await one.encrypt(Buffer.from('d'))).toString()).toBe('d');
    expect(one.inline.answered).toBe(1);
    await Promise.all([slow.close(), off.close(), one.close()]);
  });

  it('survives the token going away and coming back: 503 meanwhile, then inline again on new handles', async () => {
    const k = await key({ inlineMaxMicros: 10_000 });
    expect(open(await k.encrypt(Buffer.from('x'))).toString()).toBe('x');
    expect(k.inline.answered).toBe(1);
    const reinit0 = (await lib.stats()).reinitializations;
    const away = hsm.tokenDir + '.away';
    renameSync(hsm.tokenDir, away);
    try {
      await expect(k.encrypt(Buffer.from('y'))).rejects.toMatchObject({ status: 503 });
    } finally {
      renameSync(away, hsm.tokenDir);
    }
    // Back: the worker re-initializes (behind the gate) and answers; the key learns new handles.
    let ct: Buffer | null = null;
    for (let i = 0; i < 50 && !ct; i++) {
      try {
        ct = await k.encrypt(Buffer.from('z'));
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    expect(open(ct!).toString()).toBe('z');
    expect((await lib.stats()).reinitializations).toBeGreaterThan(reinit0);
    for (let i = 0; i < 50 && !k.inline.active; i++) {
      await k.encrypt(Buffer.from('w'));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(k.inline.active).toBe(true);
    const n = k.inline.answered;
    expect(open(await k.encrypt(Buffer.from('again'))).toString()).toBe('again');
    expect(k.inline.answered).toBe(n + 1);
    await k.close();
  });
});
