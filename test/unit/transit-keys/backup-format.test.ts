import { describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { createPublicKey, verify } from 'node:crypto';
import { p256, p384 } from '@noble/curves/nist.js';
import { decodeBackup, encodeBackup } from '../../../src/engines/transit/keyring/backup-format.js';
import { generateVersion } from '../../../src/engines/transit/keyring/material.js';
import { newKeyConfig } from '../../../src/engines/transit/keyring/key-rules.js';
import { KEY_TYPES } from '../../../src/engines/transit/keyring/key-types.js';
import type { KeyTypeName, TransitKey } from '../../../src/engines/transit/keyring/types.js';
import { vaultBackup } from './vault-backup-builder.js';

const vec6 = JSON.parse(readFileSync('test/vectors/vault-docs-backup-aes.json', 'utf8'));
const sig = JSON.parse(readFileSync('test/vectors/vault-sign-hmac-vectors.json', 'utf8'));

/** Parameter sets of the post-quantum types (the fast SLH-DSA set keeps the test quick). */
const PQ: Partial<Record<KeyTypeName, { parameterSet: string; hybridEc?: 'ecdsa-p384' }>> = {
  'ml-dsa': { parameterSet: '65' },
  'slh-dsa': { parameterSet: 'slh-dsa-sha2-128f' },
  hybrid: { parameterSet: '44', hybridEc: 'ecdsa-p384' },
};

async function makeKey(type: KeyTypeName, versions = 2): Promise<TransitKey> {
  const k = newKeyConfig(`k-${type}`, { type, exportable: true, allowPlaintextBackup: true, ...PQ[type] });
  for (let n = 1; n <= versions; n++)
    k.versions.set(n, await generateVersion(type, n, { now: 1740823200 + n + 0.25, keySize: k.keySize, ...PQ[type] }));
  k.latestVersion = versions;
  return k;
}

const der = (k?: import('node:crypto').KeyObject) =>
  k
    ? Buffer.from(k.export({ format: 'der', type: k.type === 'private' ? 'pkcs8' : 'spki' })).toString('hex')
    : undefined;

describe('Vault backup format (reference 5.2)', () => {
  test('restores the Vault docs backup sample (vector 6) with its key, HMAC key and times', () => {
    const k = decodeBackup(vec6.backup);
    expect(k.name).toBe('aes');
    expect(k.type).toBe('aes256-gcm96');
    expect(k.latestVersion).toBe(1);
    expect(k.allowPlaintextBackup).toBe(false);
    const v1 = k.versions.get(1)!;
    expect(v1.key!.toString('base64')).toBe(vec6.key_v1);
    expect(v1.hmacKey.toString('base64')).toBe(vec6.hmac_key_v1);
    expect(v1.creationTime).toBeCloseTo(1512751808.613837, 5);
    expect(k.backupInfo).toEqual({ time: '2017-12-08T11:50:29.228157-05:00', version: 1 });
  });

  test('renames on restore when a name is given', () => {
    expect(decodeBackup(vec6.backup, 'other').name).toBe('other');
  });

  test.each(
    Object.keys(KEY_TYPES).filter((t) => t !== 'managed_key' && !t.startsWith('rsa-3') && !t.startsWith('rsa-4')),
  )('round-trips a %s key with all material', async (type) => {
    const k = await makeKey(type as KeyTypeName);
    k.minDecryptionVersion = 2;
    k.deletionAllowed = true;
    k.autoRotatePeriod = 7200;
    const back = decodeBackup(encodeBackup(k));
    expect(back.type).toBe(type);
    expect([back.parameterSet, back.hybridEc]).toEqual([k.parameterSet, k.hybridEc]);
    expect([back.latestVersion, back.minDecryptionVersion, back.deletionAllowed, back.autoRotatePeriod]).toEqual([
      2,
      2,
      true,
      7200,
    ]);
    for (const n of [1, 2]) {
      const a = k.versions.get(n)!;
      const b = back.versions.get(n)!;
      expect(b.hmacKey.equals(a.hmacKey)).toBe(true);
      expect(b.key?.toString('hex')).toBe(a.key?.toString('hex'));
      expect(der(b.privateKey)).toBe(der(a.privateKey));
      expect(der(b.publicKey)).toBe(der(a.publicKey));
      expect(b.creationTime).toBeCloseTo(a.creationTime, 5);
    }
  });

  test("writes Go's JSON: field order, bare big integers for RSA, durations in nanoseconds, trailing newline", async () => {
    const k = await makeKey('rsa-2048', 1);
    k.autoRotatePeriod = 3600;
    const text = Buffer.from(encodeBackup(k), 'base64').toString('utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.startsWith('{"policy":{"name":"k-rsa-2048","keys":{"1":{"key":null,"hmac_key":"')).toBe(true);
    expect(text).toMatch(
      /"rsa_key":\{"PublicKey":\{"N":\d{600,},"E":65537\},"D":\d+,"Primes":\[\d+,\d+\],"Precomputed":\{"Dp":\d+,"Dq":\d+,"Qinv":\d+,"CRTValues":\[\]\}\}/,
    );
    expect(text).toContain('"auto_rotate_period":3600000000000');
    expect(text).toContain('"type":3,');
    expect(text).toContain('"archived_keys":{"keys":[{"key":null,"hmac_key":null,"time":"0001-01-01T00:00:00Z"');
    const n = /"N":(\d+)/.exec(text)![1]!;
    const jwkN = Buffer.from(k.versions.get(1)!.publicKey!.export({ format: 'jwk' }).n!, 'base64url').toString('hex');
    expect(BigInt(n).toString(16).padStart(jwkN.length, '0')).toBe(jwkN);
  });

  test('keeps keyhold-only types distinguishable (xchacha20-poly1305 carries keyhold_type)', async () => {
    const text = Buffer.from(encodeBackup(await makeKey('xchacha20-poly1305', 1)), 'base64').toString('utf8');
    expect(text).toContain('"keyhold_type":"xchacha20-poly1305"');
    expect(text).not.toContain('"type":11,');
  });

  test.each(sig.ecdsa)(
    "loads $type fixture coordinates from a hand-built backup and verifies Vault's signature (vectors 3, 4)",
    (v: { type: string; x: string; y: string; d: string; signature: string }) => {
      const typeNum = v.type === 'ecdsa-p256' ? 1 : 6;
      const k = decodeBackup(
        vaultBackup('ec', typeNum, [
          { key: null, hmac_key: Buffer.alloc(32, 1).toString('base64'), ec: { x: v.x, y: v.y, d: v.d } },
        ]),
      );
      const ver = k.versions.get(1)!;
      const input = Buffer.from(sig.input_b64, 'base64');
      const der = Buffer.from(v.signature.split(':')[2]!, 'base64');
      expect(verify('sha256', input, ver.publicKey!, der)).toBe(true);
      // @noble agrees on the public point derived from d.
      const curve = v.type === 'ecdsa-p256' ? p256 : p384;
      const pub = Buffer.from(curve.getPublicKey(Buffer.from(v.d, 'hex'), false)).toString('hex');
      expect(pub).toBe('04' + v.x + v.y);
      expect(createPublicKey(ver.privateKey!).export({ format: 'jwk' }).x).toBe(
        Buffer.from(v.x, 'hex').toString('base64url'),
      );
    },
  );

  test("converts Vault's kdf and convergent numbering both ways", async () => {
    const k = newKeyConfig('c', { type: 'aes256-gcm96', derived: true, convergentEncryption: true });
    k.versions.set(1, await generateVersion('aes256-gcm96', 1, { now: 1, convergentVersion: 3 }));
    k.latestVersion = 1;
    const text = Buffer.from(encodeBackup(k), 'base64').toString('utf8');
    expect(text).toContain('"kdf":1,');
    expect(text).toContain('"convergent_version":-1,');
    expect(text).toContain('"convergent_version":3,');
    const back = decodeBackup(encodeBackup(k));
    expect([back.kdf, back.convergentVersion, back.versions.get(1)!.convergentVersion]).toEqual([0, 3, 3]);
  });

  test("reads OpenBao's type numbers (10 = hmac, 11 = xchacha20-poly1305) by their key_size", () => {
    const mac = Buffer.alloc(48, 7).toString('base64');
    expect(decodeBackup(vaultBackup('bao-hmac', 10, [{ key: mac, hmac_key: mac }], { key_size: 48 })).type).toBe(
      'hmac',
    );
    expect(
      decodeBackup(vaultBackup('bao-x', 11, [{ key: Buffer.alloc(32, 1).toString('base64'), hmac_key: mac }])).type,
    ).toBe('xchacha20-poly1305');
    expect(decodeBackup(vaultBackup('vault-hmac', 11, [{ key: mac, hmac_key: mac }], { key_size: 48 })).type).toBe(
      'hmac',
    );
  });

  test('refuses malformed backups with 400s naming backup', () => {
    expect(() => decodeBackup('not base64 json')).toThrow(/^backup: /);
    expect(() =>
      decodeBackup(
        Buffer.from(
          '{"policy":{"type":0,"latest_version":2,"keys":{"1":{"key":"' + Buffer.alloc(32).toString('base64') + '"}}}}',
        ).toString('base64'),
      ),
    ).toThrow('backup: backup has no key material for version 2');
    expect(() =>
      decodeBackup(vaultBackup('bad', 0, [{ key: Buffer.alloc(7).toString('base64'), hmac_key: null }])),
    ).toThrow('backup: version 1: key must be 32 bytes');
    expect(() => decodeBackup(vaultBackup('m', 10, [{ key: null }]))).toThrow('backup: key type 10 is not supported');
  });
});
