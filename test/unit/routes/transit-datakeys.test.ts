/**
 * Batch data keys (`datakeys/:type/:name`, Vault Enterprise's shape) through the real router and core:
 * count keys in one call, each wrapped like `datakey` (the plaintext decrypts back), derived keys with
 * a context, key_version, the wrapped-only path, and the 400s naming `count` and `bits`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanup, startHarness, type Answer, type Harness } from '../../support/harness.js';

let d: Harness;
beforeAll(async () => {
  d = await startHarness();
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

const err = (r: Answer) => (r.body?.errors ?? []).join('; ');
function ok(r: Answer, status = 200): Answer {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}
const post = (path: string, body: unknown) => d.req('POST', `transit/${path}`, body);

describe('datakeys', () => {
  test('plaintext path: count distinct keys, each decrypts to its plaintext', async () => {
    ok(await post('keys/dk', {}));
    const out = ok(await post('datakeys/plaintext/dk', { count: 5, bits: 128 })).body.data;
    expect(out.key_version).toBe(1);
    expect(out.key_pairs).toHaveLength(5);
    const seen = new Set<string>();
    for (const p of out.key_pairs) {
      expect(Buffer.from(p.plaintext, 'base64').length).toBe(16);
      seen.add(p.plaintext);
      expect(ok(await post('decrypt/dk', { ciphertext: p.ciphertext })).body.data.plaintext).toBe(p.plaintext);
    }
    expect(seen.size).toBe(5);
  });

  test('wrapped path has no plaintext; key_version selects the wrapping version', async () => {
    ok(await post('keys/dkv', {}));
    ok(await post('keys/dkv/rotate', {}));
    const out = ok(await post('datakeys/wrapped/dkv', { count: 2, key_version: 1 })).body.data;
    expect(out.key_version).toBe(1);
    for (const p of out.key_pairs) {
      expect(p.plaintext).toBeUndefined();
      expect(p.ciphertext.startsWith('vault:v1:')).toBe(true);
    }
    expect(
      ok(await post('datakeys/wrapped/dkv', { count: 1 })).body.data.key_pairs[0].ciphertext.startsWith('vault:v2:'),
    ).toBe(true);
  });

  test('derived keys need the context, which applies to every key', async () => {
    ok(await post('keys/dkd', { derived: true }));
    const ctx = Buffer.from('tenant-1').toString('base64');
    expect((await post('datakeys/plaintext/dkd', { count: 2 })).status).toBe(400);
    const out = ok(await post('datakeys/plaintext/dkd', { count: 2, context: ctx })).body.data;
    for (const p of out.key_pairs)
      expect(ok(await post('decrypt/dkd', { ciphertext: p.ciphertext, context: ctx })).body.data.plaintext).toBe(
        p.plaintext,
      );
  });

  test('bad input: count, bits, type path, missing key', async () => {
    ok(await post('keys/dkb', {}));
    for (const count of [0, 1001]) {
      const r = await post('datakeys/plaintext/dkb', { count });
      expect(r.status).toBe(400);
      expect(err(r)).toMatch(/count/);
    }
    expect((await post('datakeys/plaintext/dkb', {})).status).toBe(400);
    expect(err(await post('datakeys/plaintext/dkb', { count: 1, bits: 100 }))).toMatch(/bit length/);
    expect((await post('datakeys/other/dkb', { count: 1 })).status).toBe(400);
    expect((await post('datakeys/plaintext/none', { count: 1 })).status).toBe(400);
  });
});
