/** HMAC and hash: reference section 10 vectors 1 and 2, verification rules, random and batch status helpers. */
import { describe, expect, it } from 'vitest';
import { hmac } from '@noble/hashes/hmac.js';
import { sha3_256 } from '@noble/hashes/sha3.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { hmacAlgorithm, hmacWithKey, verifyHmacWithKey } from '../../../src/engines/transit/ops/hmac.js';
import { hashInput } from '../../../src/engines/transit/ops/hashing.js';
import { randomOutput, resolveRandomPath } from '../../../src/engines/transit/ops/random-bytes.js';
import { batchStatus } from '../../../src/engines/transit/ops/batch.js';
import {
  parseDerSignature,
  encodeDerSignature,
  splitJws,
  toFixed,
} from '../../../src/engines/transit/ops/ecdsa-der.js';
import { symmetricKey, asymmetricKey } from './fixtures.js';

const FOX = Buffer.from('dGhlIHF1aWNrIGJyb3duIGZveA==', 'base64');

describe('HMAC vector 1 (hmac_key "0123...01", input "the quick brown fox")', () => {
  const key = symmetricKey('aes256-gcm96', [Buffer.alloc(32), Buffer.alloc(32)]);
  key.versions.get(1)!.hmacKey = Buffer.from('01234567890123456789012345678901');
  key.versions.get(2)!.hmacKey = Buffer.from('12345678901234567890123456789012');
  it.each([
    ['sha2-256', 'vault:v1:UcBvm5VskkukzZHlPgm3p5P/Yr/PV6xpuOGZISya3A4='],
    ['sha2-224', 'vault:v1:3p+ZWVquYDvu2dSTCa65Y3fgoMfIAc6fNaBbtg=='],
    ['sha2-384', 'vault:v1:jDB9YXdPjpmr29b1JCIEJO93IydlKVfD9mA2EO9OmJtJQg3QAV5tcRRRb7IQGW9p'],
    ['sha2-512', 'vault:v1:PSXLXvkvKF4CpU65e2bK1tGBZQpcpCEM32fq2iUoiTyQQCfBcGJJItQ+60tMwWXAPQrC290AzTrNJucGrr4GFA=='],
    ['sha3-224', 'vault:v1:TGipmKH8LR/BkMolYpDYy0BJCIhTtGPDhV2VkQ=='],
    ['sha3-256', 'vault:v1:+px9V/7QYLfdK808zPESC2T/L33uFf4Blzsn9Jy838o='],
    ['sha3-384', 'vault:v1:YGoRwN4UdTRYZeOER86jsQOB8piWenzLDzJ2wJQK/Jq59rAsY8lh7SCdqqCyFg70'],
    ['sha3-512', 'vault:v1:GrNA8sU88naMPEQ7UZGj9EJl7YJhl03AFHfxcEURFrtvnobdea9ZlZHePpxAx/oCaC7R2HkrAO+Tu3uXPIl3lg=='],
  ])('%s gives %s and verifies', (alg, expected) => {
    expect(hmacWithKey(key, hmacAlgorithm(alg), FOX, 1)).toBe(expected);
    expect(verifyHmacWithKey(key, hmacAlgorithm(alg), FOX, expected)).toBe(true);
  });
  it('version 2 with key "1234...12" (latest by default)', () => {
    expect(hmacWithKey(key, hmacAlgorithm('sha2-256'), FOX)).toBe(
      'vault:v2:Dt+mO/B93kuWUbGMMobwUNX5Wodr6dL3JH4DMfpQ0kw=',
    );
  });
  it('matches @noble hmac for sha3-256', () => {
    const mac = Buffer.from(hmac(sha3_256, Buffer.from('01234567890123456789012345678901'), FOX)).toString('base64');
    expect(hmacWithKey(key, hmacAlgorithm('sha3-256'), FOX, 1)).toBe('vault:v1:' + mac);
  });
});

describe('HMAC rules', () => {
  it('the hmac key type uses its own key (32-512 bytes)', () => {
    const k = Buffer.alloc(64, 9);
    const key = symmetricKey('hmac', [k]);
    expect(hmacWithKey(key, hmacAlgorithm('sha2-512'), FOX)).toBe(
      'vault:v1:' + Buffer.from(hmac(sha512, k, FOX)).toString('base64'),
    );
  });
  it('wrong input or wrong version fails verification (false)', () => {
    const key = symmetricKey('aes256-gcm96', 2);
    const mac = hmacWithKey(key, hmacAlgorithm('sha2-256'), FOX, 1);
    expect(verifyHmacWithKey(key, hmacAlgorithm('sha2-256'), Buffer.from('x'), mac)).toBe(false);
    expect(verifyHmacWithKey(key, hmacAlgorithm('sha2-256'), FOX, mac.replace('v1', 'v2'))).toBe(false);
  });
  it.each([
    ['bad', 'invalid HMAC to verify: no prefix'],
    ['vault:v1', 'invalid HMAC: wrong number of fields'],
    ['vault:vq:AA', 'invalid HMAC: version number could not be decoded'],
    ['vault:v3:AA', 'invalid HMAC: version is too new'],
  ])('verify of %s fails with "%s"', (mac, msg) => {
    expect(() => verifyHmacWithKey(symmetricKey('aes256-gcm96', 2), hmacAlgorithm('sha2-256'), FOX, mac)).toThrow(msg);
  });
  it('versions below min_decryption_version cannot verify; below min_encryption_version cannot generate', () => {
    const key = symmetricKey('aes256-gcm96', 3, { minDecryptionVersion: 2, minEncryptionVersion: 3 });
    expect(() => verifyHmacWithKey(key, hmacAlgorithm('sha2-256'), FOX, 'vault:v1:AAAA')).toThrow(
      'cannot verify HMAC: version is too old (disallowed by policy)',
    );
    expect(() => hmacWithKey(key, hmacAlgorithm('sha2-256'), FOX, 2)).toThrow(
      'cannot generate HMAC: version is too old (disallowed by policy)',
    );
    expect(() => hmacWithKey(key, hmacAlgorithm('sha2-256'), FOX, 4)).toThrow(
      'key version does not exist; latest key version is 3',
    );
    expect(() => hmacWithKey(key, hmacAlgorithm('sha2-256'), FOX, -1)).toThrow(
      'cannot generate HMAC: version is too old (disallowed by policy)',
    );
  });
  it('negative version without a minimum says it does not exist', () => {
    expect(() => hmacWithKey(symmetricKey('aes256-gcm96'), hmacAlgorithm('sha2-256'), FOX, -1)).toThrow(
      'key version does not exist (cannot be negative)',
    );
  });
  it('none and unknown algorithms are 400s; sha1 works', () => {
    expect(() => hmacAlgorithm('none')).toThrow('unsupported algorithm none');
    expect(() => hmacAlgorithm('md5')).toThrow('unsupported algorithm md5');
    expect(hmacWithKey(asymmetricKey('ecdsa-p256'), hmacAlgorithm('sha1'), FOX)).toMatch(
      /^vault:v1:[A-Za-z0-9+/]{27}=$/,
    );
  });
});

describe('hash vector 2', () => {
  it.each([
    ['sha2-256', 'hex', '9ecb36561341d18eb65484e833efea61edc74b84cf5e6ae1b81c63533e25fc8f'],
    ['sha2-224', 'hex', 'ea074a96cabc5a61f8298a2c470f019074642631a49e1c5e2f560865'],
    ['sha2-512', 'base64', '2dOA8puXrWodkumH2D+loCZTMB4QBt0rzVGvpZqRR+nK7a+JUhq8DwtoKtzUf7USuDQ8g0oy8yb+m+8AVCzohw=='],
    ['sha3-256', 'hex', 'e4bd866ec3fa52df3b7842aa97b448bc859a7606cefcdad1715847f4b82a6c93'],
  ])('%s (%s)', (alg, format, expected) => {
    expect(hashInput(alg, FOX, format)).toBe(expected);
  });
  it("bad format and algorithm are 400s with Vault's words; sha1 is not a hash endpoint algorithm", () => {
    expect(() => hashInput('sha2-256', FOX, 'base92')).toThrow(
      'unsupported encoding format base92; must be "hex" or "base64"',
    );
    expect(() => hashInput('sha1', FOX, 'hex')).toThrow('unsupported algorithm sha1');
  });
});

describe('random', () => {
  it('one URL segment is a source when it names one, else a byte count', () => {
    expect(resolveRandomPath('all', undefined)).toEqual({ source: 'all', bytes: undefined });
    expect(resolveRandomPath('16', undefined)).toEqual({ source: undefined, bytes: 16 });
    expect(resolveRandomPath('platform', '8')).toEqual({ source: 'platform', bytes: 8 });
    expect(() => resolveRandomPath('lots', undefined)).toThrow(/error parsing url-set byte count/);
  });
  it('bounds, formats and sources', () => {
    expect(Buffer.from(randomOutput(32, 'base64', 'platform'), 'base64').length).toBe(32);
    expect(randomOutput(5, 'hex', 'all')).toMatch(/^[0-9a-f]{10}$/);
    expect(() => randomOutput(0, 'hex', 'platform')).toThrow('"bytes" cannot be less than 1');
    expect(() => randomOutput(131073, 'hex', 'platform')).toThrow('"bytes" should be less than 131072');
    expect(() => randomOutput(4, 'b32', 'platform')).toThrow(
      'unsupported encoding format "b32"; must be "hex" or "base64"',
    );
    expect(() => randomOutput(4, 'hex', 'seal')).toThrow(/^source: entropy source "seal" is not available/);
    expect(() => randomOutput(4, 'hex', 'moon')).toThrow('unsupported entropy source "moon"');
  });
});

describe('batch status (spec 7 item 1, reference 3.4)', () => {
  const user = { message: 'bad', user: true };
  const internalErr = { message: 'boom', user: false };
  it('no failure -> 200; partial user failure -> 400; partial internal -> 500', () => {
    expect(batchStatus([undefined, undefined], undefined).status).toBe(200);
    expect(batchStatus([undefined, user], undefined).status).toBe(400);
    expect(batchStatus([undefined, internalErr], undefined).status).toBe(500);
  });
  it('partial_failure_response_code replaces the partial status; out of range warns and reverts', () => {
    expect(batchStatus([undefined, user], 207).status).toBe(207);
    const r = batchStatus([undefined, user], 600);
    expect(r.status).toBe(400);
    expect(r.warnings[0]).toBe(
      'invalid HTTP response code override from partial_failure_response_code, reverting to 400',
    );
  });
  it('all failed -> error status, override ignored', () => {
    expect(batchStatus([user, user], 207).status).toBe(400);
    expect(batchStatus([internalErr], 207).status).toBe(500);
  });
});

describe('ECDSA signature encodings', () => {
  it('DER round trip and strictness', () => {
    const der = encodeDerSignature(1n, 0x80n);
    expect(der.toString('hex')).toBe('3007020101020200' + '80');
    expect(parseDerSignature(der)).toEqual({ r: 1n, s: 0x80n });
    expect(parseDerSignature(Buffer.from('300702010102020080', 'hex'))).toEqual({ r: 1n, s: 0x80n });
    expect(parseDerSignature(Buffer.from('30080201010203000080', 'hex'))).toBe('invalid'); // non-minimal integer
    expect(parseDerSignature(Buffer.concat([der, Buffer.from([1])]))).toBe('extra');
    expect(parseDerSignature(Buffer.from('3006020101020201', 'hex'))).toBe('invalid'); // integer runs past the sequence
  });
  it('JWS halves and fixed width', () => {
    expect(splitJws(Buffer.from('0102', 'hex'))).toEqual({ r: 1n, s: 2n });
    expect(toFixed(1n, 2n, 2)!.toString('hex')).toBe('00010002');
    expect(toFixed(1n << 16n, 2n, 2)).toBeNull();
  });
});
