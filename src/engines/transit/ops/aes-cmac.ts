/**
 * AES-CMAC (NIST SP 800-38B) over node:crypto's AES: node has no CMAC API on every supported Node,
 * so the mode is built here from AES-ECB (subkeys) and AES-CBC with a zero IV (the chain). Pure
 * function of key and message; no transit types.
 */
import { createCipheriv } from 'node:crypto';

/** AES block size in bytes (the largest CMAC length). */
export const CMAC_BLOCK = 16;

const CIPHERS: Record<number, { ecb: string; cbc: string }> = {
  16: { ecb: 'aes-128-ecb', cbc: 'aes-128-cbc' },
  24: { ecb: 'aes-192-ecb', cbc: 'aes-192-cbc' },
  32: { ecb: 'aes-256-ecb', cbc: 'aes-256-cbc' },
};

/** Multiply by x in GF(2^128) (SP 800-38B 6.1: shift left one bit, xor Rb = 0x87 on carry). */
function dbl(block: Buffer): Buffer {
  const out = Buffer.alloc(CMAC_BLOCK);
  let carry = 0;
  for (let i = CMAC_BLOCK - 1; i >= 0; i--) {
    const b = block[i]!;
    out[i] = ((b << 1) | carry) & 0xff;
    carry = b >>> 7;
  }
  if (carry) out[CMAC_BLOCK - 1]! ^= 0x87;
  return out;
}

/** The subkeys K1 and K2 of `key` (SP 800-38B 6.1). */
export function cmacSubkeys(key: Buffer): { k1: Buffer; k2: Buffer } {
  const c = CIPHERS[key.length];
  if (!c) throw new RangeError(`AES-CMAC key must be 16, 24 or 32 bytes, got ${key.length}`);
  const e = createCipheriv(c.ecb, key, null).setAutoPadding(false);
  const l = Buffer.concat([e.update(Buffer.alloc(CMAC_BLOCK)), e.final()]);
  const k1 = dbl(l);
  return { k1, k2: dbl(k1) };
}

/**
 * The AES-CMAC of `msg` under `key`, truncated to `macLength` bytes (1-16; the leftmost bytes, as
 * SP 800-38B 6.2 step 7 says).
 */
export function aesCmac(key: Buffer, msg: Buffer, macLength = CMAC_BLOCK): Buffer {
  if (!Number.isInteger(macLength) || macLength < 1 || macLength > CMAC_BLOCK)
    throw new RangeError(`CMAC length must be 1-${CMAC_BLOCK} bytes, got ${macLength}`);
  const { k1, k2 } = cmacSubkeys(key);
  const n = Math.max(1, Math.ceil(msg.length / CMAC_BLOCK));
  const complete = msg.length > 0 && msg.length % CMAC_BLOCK === 0;
  // M' = M1 .. Mn-1 || (Mn xor K1) for a complete last block, else (Mn || 10..0) xor K2.
  const padded = Buffer.alloc(n * CMAC_BLOCK);
  msg.copy(padded);
  if (!complete) padded[msg.length] = 0x80;
  const sub = complete ? k1 : k2;
  const last = (n - 1) * CMAC_BLOCK;
  for (let i = 0; i < CMAC_BLOCK; i++) padded[last + i]! ^= sub[i]!;
  const c = CIPHERS[key.length]!;
  const cbc = createCipheriv(c.cbc, key, Buffer.alloc(CMAC_BLOCK)).setAutoPadding(false);
  const chain = cbc.update(padded);
  cbc.final();
  const tag = Buffer.from(chain.subarray(chain.length - CMAC_BLOCK, chain.length - CMAC_BLOCK + macLength));
  padded.fill(0);
  return tag;
}
