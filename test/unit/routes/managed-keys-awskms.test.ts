/**
 * Managed keys in AWS KMS against the moto server (issue 15 part 8): RSA and ECDSA keys generated
 * behind an alias sign through transit and verify locally and with openssl; a symmetric key
 * (key_type AES) encrypts and decrypts in KMS; the endpoint goes through the network guard.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startHarness, type Harness } from '../../support/harness.js';
import { startMoto, type Moto } from '../../support/moto.js';

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

describe('managed keys in AWS KMS (moto)', () => {
  let moto: Moto;
  let d: Harness;
  let work: string;
  const aws = () => ({
    endpoint: moto.endpoint,
    region: 'us-east-1',
    access_key: 'AKIDTEST',
    secret_key: 'moto-secret-value',
    allowed_ipv4_addresses: '127.0.0.1/32',
    allowed_ports: String(moto.port),
    any_mount: true,
  });

  beforeAll(async () => {
    moto = await startMoto();
    work = mkdtempSync(join(tmpdir(), 'keyhold-awskms-'));
    d = await startHarness();
  });
  afterAll(async () => {
    await d?.stop();
    if (d) cleanup(d.dir);
    await moto?.stop();
    if (work) cleanup(work);
  });

  it('refuses the loopback endpoint unless the key allows it (sync network rules)', async () => {
    expect(
      (
        await d.req('POST', 'sys/managed-keys/awskms/guarded', {
          ...aws(),
          allowed_ipv4_addresses: '',
          allowed_ports: '',
          kms_key: 'alias/guarded',
          key_type: 'RSA',
          key_bits: 2048,
          allow_generate_key: true,
        })
      ).status,
    ).toBe(204);
    const r = await d.req('POST', 'sys/managed-keys/awskms/guarded/test/sign', {});
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/endpoint: network guard: port \d+ is not allowed/);
  });

  it('generates an RSA key behind an alias; transit signatures verify with openssl and through the API', async () => {
    const w = await d.req('POST', 'sys/managed-keys/awskms/kms-rsa', {
      ...aws(),
      kms_key: 'alias/keyhold-rsa',
      key_type: 'RSA',
      key_bits: 2048,
      allow_generate_key: true,
    });
    expect(w.status).toBe(204);
    const read = await d.req('GET', 'sys/managed-keys/awskms/kms-rsa');
    expect(read.body.data).toMatchObject({
      access_key: 'redacted',
      secret_key: 'redacted',
      key_type: 'RSA',
      kms_key: 'alias/keyhold-rsa',
    });
    expect(read.text).not.toContain('moto-secret-value');
    expect((await d.req('POST', 'sys/managed-keys/awskms/kms-rsa/test/sign', {})).status).toBe(204);
    expect(
      (await d.req('POST', 'transit/keys/awsrsa', { type: 'managed_key', managed_key_name: 'kms-rsa' })).status,
    ).toBe(200);
    const pem = (await d.req('GET', 'transit/keys/awsrsa')).body.data.keys['1'].public_key as string;
    writeFileSync(join(work, 'rsa.pub'), pem);
    writeFileSync(join(work, 'msg'), 'kms message');
    for (const alg of ['pkcs1v15', 'pss']) {
      for (const [h, o] of [
        ['sha2-256', 'sha256'],
        ['sha2-512', 'sha512'],
      ]) {
        const s = await d.req('POST', `transit/sign/awsrsa/${h}`, {
          input: b64('kms message'),
          signature_algorithm: alg,
        });
        expect(s.status, s.text).toBe(200);
        writeFileSync(join(work, 'sig'), Buffer.from(String(s.body.data.signature).slice(9), 'base64'));
        const extra = alg === 'pss' ? ['-sigopt', 'rsa_padding_mode:pss', '-sigopt', 'rsa_pss_saltlen:-2'] : [];
        execFileSync(
          'openssl',
          [
            'dgst',
            `-${o}`,
            '-verify',
            join(work, 'rsa.pub'),
            '-signature',
            join(work, 'sig'),
            ...extra,
            join(work, 'msg'),
          ],
          { stdio: 'pipe' },
        );
        expect(
          (
            await d.req('POST', `transit/verify/awsrsa/${h}`, {
              input: b64('kms message'),
              signature: s.body.data.signature,
              signature_algorithm: alg,
            })
          ).body.data.valid,
        ).toBe(true);
        expect(
          (
            await d.req('POST', `transit/verify/awsrsa/${h}`, {
              input: b64('kms massage'),
              signature: s.body.data.signature,
              signature_algorithm: alg,
            })
          ).body.data.valid,
        ).toBe(false);
      }
    }
    // KMS signs only sha2-256/384/512.
    expect((await d.req('POST', 'transit/sign/awsrsa/sha1', { input: b64('x') })).body.errors[0]).toMatch(
      /not supported by AWS KMS/,
    );
    // An AWS signing key does not encrypt.
    expect((await d.req('POST', 'transit/encrypt/awsrsa', { plaintext: b64('x') })).status).toBe(400);
  });

  it('ECDSA P-256 in KMS: DER signatures verify with openssl', async () => {
    expect(
      (
        await d.req('POST', 'sys/managed-keys/awskms/kms-ec', {
          ...aws(),
          kms_key: 'alias/keyhold-ec',
          key_type: 'ECDSA',
          curve: 'P256',
          allow_generate_key: true,
        })
      ).status,
    ).toBe(204);
    expect(
      (await d.req('POST', 'transit/keys/awsec', { type: 'managed_key', managed_key_name: 'kms-ec' })).status,
    ).toBe(200);
    const pem = (await d.req('GET', 'transit/keys/awsec')).body.data.keys['1'].public_key as string;
    writeFileSync(join(work, 'ec.pub'), pem);
    const s = await d.req('POST', 'transit/sign/awsec', { input: b64('kms message') });
    expect(s.status, s.text).toBe(200);
    writeFileSync(join(work, 'ecsig'), Buffer.from(String(s.body.data.signature).slice(9), 'base64'));
    execFileSync(
      'openssl',
      ['dgst', '-sha256', '-verify', join(work, 'ec.pub'), '-signature', join(work, 'ecsig'), join(work, 'msg')],
      { stdio: 'pipe' },
    );
    expect(
      (await d.req('POST', 'transit/verify/awsec', { input: b64('kms message'), signature: s.body.data.signature }))
        .body.data.valid,
    ).toBe(true);
  });

  it('symmetric KMS key (key_type AES): encrypt/decrypt with associated data, datakey', async () => {
    expect(
      (
        await d.req('POST', 'sys/managed-keys/awskms/kms-aes', {
          ...aws(),
          kms_key: 'alias/keyhold-aes',
          key_type: 'AES',
          allow_generate_key: true,
        })
      ).status,
    ).toBe(204);
    expect(
      (await d.req('POST', 'transit/keys/awsaes', { type: 'managed_key', managed_key_name: 'kms-aes' })).status,
    ).toBe(200);
    const e = await d.req('POST', 'transit/encrypt/awsaes', {
      plaintext: b64('kms secret'),
      associated_data: b64('ctx'),
    });
    expect(e.status, e.text).toBe(200);
    expect(e.body.data.ciphertext).toMatch(/^vault:v1:/);
    const dec = await d.req('POST', 'transit/decrypt/awsaes', {
      ciphertext: e.body.data.ciphertext,
      associated_data: b64('ctx'),
    });
    expect(Buffer.from(dec.body.data.plaintext, 'base64').toString()).toBe('kms secret');
    const bad = await d.req('POST', 'transit/decrypt/awsaes', {
      ciphertext: e.body.data.ciphertext,
      associated_data: b64('other'),
    });
    expect(bad.status).toBe(400);
    const dk = await d.req('POST', 'transit/datakey/plaintext/awsaes', {});
    expect(
      (await d.req('POST', 'transit/decrypt/awsaes', { ciphertext: dk.body.data.ciphertext })).body.data.plaintext,
    ).toBe(dk.body.data.plaintext);
  });

  it('an existing KMS key with the wrong usage is refused, naming kms_key', async () => {
    expect(
      (
        await d.req('POST', 'sys/managed-keys/awskms/mismatch', {
          ...aws(),
          kms_key: 'alias/keyhold-aes',
          key_type: 'RSA',
          key_bits: 2048,
        })
      ).status,
    ).toBe(204);
    const r = await d.req('POST', 'sys/managed-keys/awskms/mismatch/test/sign', {});
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/kms_key: the key's KeyUsage is ENCRYPT_DECRYPT/);
  });
});
