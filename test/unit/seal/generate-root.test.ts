import { describe, expect, it } from 'vitest';
import { OTP_LENGTH, RootGeneration, decodeToken, encodeToken, generateOtp } from '../../../src/seal/generate-root.js';
import { splitKey } from '../../../src/seal/shamir.js';
import { randomBytes } from 'node:crypto';

describe("Vault's OTP encoding of a generated root token", () => {
  it("round-trips with hvac's test OTP and uses unpadded standard base64", () => {
    const otp = 'BMjzW3wAsEzINXCM05Wbas3u9zSl';
    const token = 'hvs.abcdefghijklmnopqrstuvwx';
    const enc = encodeToken(token, otp);
    expect(enc).not.toMatch(/=/);
    expect(Buffer.from(enc, 'base64').length).toBe(28);
    expect(decodeToken(enc, otp)).toBe(token);
  });

  it('makes 28-character base62 OTPs and refuses a pad of another length', () => {
    expect(generateOtp()).toMatch(/^[0-9A-Za-z]{28}$/);
    expect(OTP_LENGTH).toBe(28);
    expect(() => encodeToken('hvs.abcdefghijklmnopqrstuvwx', 'short')).toThrow(/^otp: /);
  });
});

describe('RootGeneration', () => {
  it('collects the threshold of shares, verifies the key, and hands back the encoded token once', async () => {
    const master = randomBytes(32);
    const shares = await splitKey(master, 3, 2);
    const g = new RootGeneration({
      required: () => 2,
      verifyKey: async (k) => void expect(k.equals(master)).toBe(true),
    });
    const start = await g.init({});
    expect(start.otp).toMatch(/^[0-9A-Za-z]{28}$/);
    expect((await g.update(shares[0]!.toString('base64'), start.nonce, async () => 'x')).progress).toBe(1);
    const done = await g.update(shares[2]!.toString('hex'), start.nonce, async () => 'hvs.abcdefghijklmnopqrstuvwx');
    expect(done.complete).toBe(true);
    expect(decodeToken(done.encoded_token, start.otp)).toBe('hvs.abcdefghijklmnopqrstuvwx');
    expect(g.status().started).toBe(false);
  });

  it('issues no token when the shares do not rebuild the key', async () => {
    const shares = await splitKey(randomBytes(32), 2, 2);
    let issued = 0;
    const g = new RootGeneration({
      required: () => 2,
      verifyKey: async () => {
        throw new Error('not the key');
      },
    });
    const s = await g.init({ otp: 'BMjzW3wAsEzINXCM05Wbas3u9zSl' });
    await g.update(shares[0]!.toString('base64'), s.nonce, async () => String(++issued));
    await expect(g.update(shares[1]!.toString('base64'), s.nonce, async () => String(++issued))).rejects.toThrow(
      /not the key/,
    );
    expect(issued).toBe(0);
  });
});
