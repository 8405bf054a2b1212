/**
 * Envelope stream format (src/crypto/envelope.ts): round trips across chunk boundaries, in this thread
 * and with worker threads; tampering, truncation, reordering, appended data, header edits and a wrong
 * key are all detected. Chunks are opened independently with @noble to check the documented layout.
 */
import { describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gcm } from '@noble/ciphers/aes.js';
import {
  EnvelopeDecryptor,
  EnvelopeEncryptor,
  EnvelopeError,
  buildHeader,
  parseHeader,
} from '../../../src/crypto/envelope.js';

const CHUNK = 4096;
const WRAPPED = 'vault:v1:d3JhcHBlZCBkYXRhIGtleQ==';

function source(data: Buffer, piece = 1000): Readable {
  let off = 0;
  return new Readable({
    read() {
      if (off >= data.length) return void this.push(null);
      this.push(data.subarray(off, off + piece));
      off += piece;
    },
  });
}

async function collect(readable: Readable, transform: import('node:stream').Transform): Promise<Buffer> {
  const parts: Buffer[] = [];
  await pipeline(
    readable,
    transform,
    new Writable({
      write(c, _e, cb) {
        parts.push(c);
        cb();
      },
    }),
  );
  return Buffer.concat(parts);
}

async function seal(data: Buffer, key: Buffer, threads = 0, piece = 1000): Promise<Buffer> {
  return collect(
    source(data, piece),
    new EnvelopeEncryptor(Buffer.from(key), buildHeader(WRAPPED, CHUNK), { threads }),
  );
}

async function open(env: Buffer, key: Buffer, threads = 0, piece = 777): Promise<Buffer> {
  let seen = '';
  const out = await collect(
    source(env, piece),
    new EnvelopeDecryptor(
      async (w) => {
        seen = w;
        return Buffer.from(key);
      },
      { threads },
    ),
  );
  expect(seen).toBe(WRAPPED);
  return out;
}

describe('envelope round trips', () => {
  const key = randomBytes(32);
  for (const size of [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK, 3 * CHUNK + 17]) {
    it(`${size} bytes round-trip (this thread)`, async () => {
      const data = randomBytes(size);
      const env = await seal(data, key);
      const chunks = Math.floor(size / CHUNK) + 1;
      expect(env.length).toBe(20 + WRAPPED.length + size + 16 * chunks);
      expect(await open(env, key)).toEqual(data);
    });
  }

  it('worker threads produce the same layout and round-trip (40 chunks, odd piece sizes)', async () => {
    const data = randomBytes(40 * CHUNK + 123);
    const env = await seal(data, key, 2, 5000);
    expect(await open(env, key, 2, 3333)).toEqual(data);
    expect(await open(env, key, 0)).toEqual(data);
  });

  it('chunks follow the documented layout (nonce = prefix || u32 i, aad = sha256(header) || u32 i || final)', async () => {
    const data = randomBytes(CHUNK + 5);
    const env = await seal(data, key);
    const h = parseHeader(env)!;
    const digest = createHash('sha256').update(h.bytes).digest();
    const chunk = (i: number, start: number, len: number, final: boolean) => {
      const nonce = Buffer.concat([h.noncePrefix, Buffer.from([0, 0, 0, i])]);
      const aad = Buffer.concat([digest, Buffer.from([0, 0, 0, i, final ? 1 : 0])]);
      return Buffer.from(gcm(key, nonce, aad).decrypt(env.subarray(start, start + len)));
    };
    const first = h.bytes.length;
    expect(chunk(0, first, CHUNK + 16, false)).toEqual(data.subarray(0, CHUNK));
    expect(chunk(1, first + CHUNK + 16, 5 + 16, true)).toEqual(data.subarray(CHUNK));
  });
});

describe('envelope tamper detection', () => {
  const key = randomBytes(32);
  const data = randomBytes(3 * CHUNK + 100);
  const hdr = 20 + WRAPPED.length;
  const C = CHUNK + 16;

  async function rejects(env: Buffer, re: RegExp, threads = 0): Promise<void> {
    await expect(open(env, key, threads)).rejects.toThrow(re);
  }

  it('a flipped ciphertext bit fails authentication of that chunk', async () => {
    const env = await seal(data, key);
    env[hdr + C + 10] ^= 1;
    await rejects(env, /chunk 1 failed authentication/);
    await rejects(env, /chunk 1 failed authentication/, 2);
  });

  it('truncation at a chunk boundary (final chunk dropped) is detected', async () => {
    const env = await seal(data, key);
    await rejects(env.subarray(0, hdr + 3 * C), /truncated \(final chunk missing\)|failed authentication/);
  });

  it('truncation inside the final chunk is detected', async () => {
    const env = await seal(data, key);
    await rejects(env.subarray(0, env.length - 5), /failed authentication/);
  });

  it('an envelope cut mid-stream whose last piece looks final is rejected', async () => {
    const env = await seal(data, key);
    await rejects(env.subarray(0, hdr + C + 500), /failed authentication/);
  });

  it('swapping two chunks is detected (index is authenticated)', async () => {
    const env = await seal(data, key);
    const a = Buffer.from(env.subarray(hdr, hdr + C));
    const b = Buffer.from(env.subarray(hdr + C, hdr + 2 * C));
    b.copy(env, hdr);
    a.copy(env, hdr + C);
    await rejects(env, /chunk 0 failed authentication/);
  });

  it('appended bytes are detected', async () => {
    const env = await seal(data, key);
    await rejects(Buffer.concat([env, Buffer.from('more')]), /failed authentication/);
  });

  it('an edited header (nonce prefix) is detected', async () => {
    const env = await seal(data, key);
    env[12] ^= 0x80;
    await rejects(env, /chunk 0 failed authentication/);
  });

  it('a wrong data key fails', async () => {
    const env = await seal(data, key);
    await expect(
      collect(source(env), new EnvelopeDecryptor(async () => randomBytes(32), { threads: 0 })),
    ).rejects.toThrow(/failed authentication/);
  });

  it('non-envelopes, empty input and absurd chunk sizes are rejected before any decryption', async () => {
    await rejects(Buffer.from('plain text file'), /not a keyhold envelope/);
    await expect(
      collect(source(Buffer.alloc(0)), new EnvelopeDecryptor(async () => key, { threads: 0 })),
    ).rejects.toThrow(/empty input/);
    const env = await seal(Buffer.from('x'), key);
    env.writeUInt32BE(1 << 30, 6);
    await expect(collect(source(env), new EnvelopeDecryptor(async () => key, { threads: 0 }))).rejects.toThrow(
      EnvelopeError,
    );
  });
});
