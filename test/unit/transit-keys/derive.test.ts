import { describe, expect, test } from 'vitest';
import { randomBytes } from 'node:crypto';
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  MISSING_CONTEXT,
  counterKdf,
  deriveBytes,
  deriveEd25519,
  hkdfSha256,
} from '../../../src/engines/transit/keyring/derive.js';

describe('key derivation (reference 4.3)', () => {
  test('HKDF-SHA256 with empty salt and the context as info matches @noble', () => {
    const ikm = randomBytes(32);
    const ctx = Buffer.from('tenant-42');
    expect(hkdfSha256(ikm, ctx, 64).equals(Buffer.from(hkdf(sha256, ikm, new Uint8Array(0), ctx, 64)))).toBe(true);
  });

  test("HKDF accepts contexts longer than node:crypto's 1024-byte info limit", () => {
    const ikm = randomBytes(32);
    const ctx = randomBytes(5000);
    expect(hkdfSha256(ikm, ctx, 32).equals(Buffer.from(hkdf(sha256, ikm, undefined, ctx, 32)))).toBe(true);
  });

  test('legacy counter KDF is one HMAC-SHA256 round over BE32(0) || context || BE32(256)', () => {
    const ikm = randomBytes(32);
    const ctx = Buffer.from('abc');
    const msg = Buffer.concat([Buffer.alloc(4), ctx, Buffer.from([0, 0, 1, 0])]);
    expect(counterKdf(ikm, ctx).equals(Buffer.from(hmac(sha256, ikm, msg)))).toBe(true);
    expect(deriveBytes(1, ikm, ctx, 32).equals(counterKdf(ikm, ctx))).toBe(true);
  });

  test("refuses an empty context with Vault's message naming context", () => {
    expect(() => deriveBytes(0, randomBytes(32), Buffer.alloc(0), 32)).toThrow(MISSING_CONTEXT);
    expect(() => deriveBytes(0, randomBytes(32), Buffer.alloc(0), 32)).toThrow(/^context: /);
  });

  test('derived Ed25519 keys are the Ed25519 keys of the first 32 HKDF bytes (checked with @noble)', () => {
    const stored = randomBytes(64);
    const ctx = Buffer.from('ctx-1');
    const seed = hkdf(sha256, stored, new Uint8Array(0), ctx, 32);
    const d = deriveEd25519(0, stored, ctx);
    expect(d.publicRaw.equals(Buffer.from(ed25519.getPublicKey(seed)))).toBe(true);
    expect(deriveEd25519(0, stored, Buffer.from('ctx-2')).publicRaw.equals(d.publicRaw)).toBe(false);
  });
});
