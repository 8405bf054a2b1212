/** The GitHub sealed box is checked with an independent implementation (@noble: X25519, HSalsa20, XSalsa20-Poly1305, BLAKE2b nonce). */
import { describe, expect, it } from 'vitest';
import { x25519 } from '@noble/curves/ed25519.js';
import { hsalsa, secretbox } from '@noble/ciphers/salsa.js';
import { blake2b } from '@noble/hashes/blake2.js';
import { sealForGithub } from '../../../src/sync/destinations/repohost.js';

const SIGMA = new Uint32Array([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]); // "expand 32-byte k"

function u32(b: Uint8Array): Uint32Array {
  return new Uint32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/** crypto_box_seal_open written from the libsodium spec with @noble primitives. */
function openSealed(box: Uint8Array, pk: Uint8Array, sk: Uint8Array): Uint8Array {
  const epk = box.subarray(0, 32);
  const nonce = blake2b(new Uint8Array([...epk, ...pk]), { dkLen: 24 });
  const shared = x25519.getSharedSecret(sk, epk);
  const out = new Uint32Array(8);
  hsalsa(SIGMA, u32(shared), new Uint32Array(4), out);
  const key = new Uint8Array(out.buffer);
  return secretbox(key, nonce).open(box.subarray(32));
}

describe('GitHub sealed box (repohost)', () => {
  it('is opened by an independent X25519/XSalsa20-Poly1305 implementation', async () => {
    const sk = x25519.utils.randomSecretKey();
    const pk = x25519.getPublicKey(sk);
    const value = 'hunter2 ✓ {"json":true}';
    const sealed = Buffer.from(await sealForGithub(value, Buffer.from(pk).toString('base64')), 'base64');
    expect(sealed.length).toBe(48 + Buffer.byteLength(value));
    expect(Buffer.from(openSealed(sealed, pk, sk)).toString('utf8')).toBe(value);
  });

  it('uses a fresh ephemeral key for every seal', async () => {
    const pk = Buffer.from(x25519.getPublicKey(x25519.utils.randomSecretKey())).toString('base64');
    const a = await sealForGithub('same', pk);
    const b = await sealForGithub('same', pk);
    expect(a).not.toBe(b);
  });

  it('refuses a public key that is not 32 bytes', async () => {
    await expect(sealForGithub('x', Buffer.alloc(31).toString('base64'))).rejects.toThrow(/32-byte/);
  });
});
