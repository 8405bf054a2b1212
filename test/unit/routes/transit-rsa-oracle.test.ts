/**
 * No padding oracle in transit (issue 20): a token holding only `update` on transit/rewrap/KEY gets
 * the same status and body shape for RSA PKCS#1 v1.5 ciphertexts with valid and invalid padding,
 * the synthetic message is deterministic per ciphertext, batches behave the same per item, and
 * OAEP failures all read the same. Ciphertexts are built here from the key's public half.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { constants, createPublicKey, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import { cleanup, startHarness, type Answer, type Harness } from '../../support/harness.js';

let d: Harness;
let pub: KeyObject;
let rewrapOnly: string;
beforeAll(async () => {
  d = await startHarness();
  ok(await post('keys/legacy', { type: 'rsa-2048' }));
  pub = createPublicKey(ok(await d.req('GET', 'transit/keys/legacy')).body.data.keys['1'].public_key);
  ok(
    await d.req('PUT', 'sys/policies/acl/rewrap-legacy', {
      policy: 'path "transit/rewrap/legacy" { capabilities = ["update"] }',
    }),
    204,
  );
  rewrapOnly = ok(await d.req('POST', 'auth/token/create', { policies: ['rewrap-legacy'], no_default_policy: true }))
    .body.auth.client_token;
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

function ok(r: Answer, status = 200): Answer {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}
const post = (path: string, body: unknown, token?: string) =>
  d.req('POST', `transit/${path}`, body, token ? { token } : {});
const K = 256;

/** Raw RSA of a chosen encoded message (RSA_NO_PADDING): any padding, valid or not. */
const rawRsa = (em: Buffer) => publicEncrypt({ key: pub, padding: constants.RSA_NO_PADDING }, em);
/** EM = 00 || 02 || PS || 00 || M, with PS non-zero random bytes. */
function encoded(msg: Buffer, first = 0x00, second = 0x02, separator = true): Buffer {
  const em = Buffer.alloc(K);
  em[0] = first;
  em[1] = second;
  const ps = K - 3 - msg.length;
  for (let i = 2; i < 2 + ps; i++) em[i] = 1 + (randomBytes(1)[0]! % 255);
  em[2 + ps] = separator ? 0 : 0x5a;
  msg.copy(em, 3 + ps);
  return em;
}
const vault = (raw: Buffer) => 'vault:v1:' + raw.toString('base64');

/** The ciphertexts a Bleichenbacher attacker would send: valid, and each kind of broken padding. */
function cases(): Record<string, string> {
  const m = Buffer.from('a 32-byte secret for the oracle!');
  return {
    valid: vault(publicEncrypt({ key: pub, padding: constants.RSA_PKCS1_PADDING }, m)),
    validOurs: vault(rawRsa(encoded(m))),
    firstByte: vault(rawRsa(encoded(m, 0x01))),
    secondByte: vault(rawRsa(encoded(m, 0x00, 0x01))),
    noSeparator: vault(rawRsa(encoded(m, 0x00, 0x02, false))),
    shortPadding: vault(rawRsa(Buffer.concat([Buffer.from([0, 2, 1, 2, 3, 0]), randomBytes(K - 6).map((b) => b | 1)]))),
    random: vault(Buffer.concat([Buffer.from([0x01]), randomBytes(K - 1)])),
  };
}

/** Body shape without values: every key path and the type (and, for strings, the length) of its value. */
function shape(v: unknown, path = ''): string[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => shape(x, `${path}[${i}]`));
  if (v && typeof v === 'object')
    return Object.keys(v)
      .sort()
      .flatMap((k) => shape((v as Record<string, unknown>)[k], `${path}.${k}`));
  if (typeof v === 'string' && v.startsWith('vault:')) return [`${path}:ciphertext(${v.length})`];
  if (path.endsWith('.request_id')) return [`${path}:id`];
  return [`${path}:${typeof v}`];
}

describe('rewrap with decrypt_padding_scheme=pkcs1v15 is no padding oracle', () => {
  test('a rewrap-only token gets 200 and the same body shape for valid and invalid padding', async () => {
    const answers: Record<string, Answer> = {};
    for (const [name, ct] of Object.entries(cases())) {
      answers[name] = await post(
        'rewrap/legacy',
        { ciphertext: ct, decrypt_padding_scheme: 'pkcs1v15', encrypt_padding_scheme: 'pkcs1v15' },
        rewrapOnly,
      );
    }
    const reference = shape(answers.valid!.body);
    for (const [name, a] of Object.entries(answers)) {
      expect(a.status, name).toBe(200);
      expect(shape(a.body), name).toEqual(reference);
      expect(a.body.data.plaintext, name).toBeUndefined();
      expect(Buffer.from(a.body.data.ciphertext.split(':')[2], 'base64').length, name).toBe(K);
    }
    expect(
      (await post('decrypt/legacy', { ciphertext: cases().valid, padding_scheme: 'pkcs1v15' }, rewrapOnly)).status,
    ).toBe(403);
  });

  test('the synthetic message is deterministic per ciphertext; a valid one keeps its real message', async () => {
    const c = cases();
    const open = async (ct: string) => {
      const r = ok(
        await post(
          'rewrap/legacy',
          { ciphertext: ct, decrypt_padding_scheme: 'pkcs1v15', encrypt_padding_scheme: 'pkcs1v15' },
          rewrapOnly,
        ),
      ).body.data.ciphertext;
      // Root holds decrypt; it may see what the rewrap carried.
      return Buffer.from(
        ok(await post('decrypt/legacy', { ciphertext: r, padding_scheme: 'pkcs1v15' })).body.data.plaintext,
        'base64',
      ).toString('hex');
    };
    expect(Buffer.from(await open(c.valid!), 'hex').toString()).toBe('a 32-byte secret for the oracle!');
    for (const name of ['firstByte', 'secondByte', 'noSeparator', 'random'] as const) {
      const first = await open(c[name]!);
      expect(await open(c[name]!), name).toBe(first);
      expect(first.length / 2, name).toBeLessThanOrEqual(K - 11);
    }
    expect(await open(c.firstByte!)).not.toBe(await open(c.secondByte!));
    // decrypt (a caller holding decrypt) keeps Vault's error for invalid padding
    const r = await post('decrypt/legacy', { ciphertext: c.firstByte, padding_scheme: 'pkcs1v15' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['failed to RSA decrypt the ciphertext: crypto/rsa: decryption error']);
  });

  test('batch items answer the same way per item', async () => {
    const c = cases();
    const items = Object.values(c).map((ciphertext, i) => ({
      ciphertext,
      decrypt_padding_scheme: 'pkcs1v15',
      encrypt_padding_scheme: 'pkcs1v15',
      reference: `r${i}`,
    }));
    const r = ok(await post('rewrap/legacy', { batch_input: items }, rewrapOnly));
    const results = r.body.data.batch_results as Record<string, unknown>[];
    expect(results).toHaveLength(items.length);
    const reference = shape(results[0]);
    results.forEach((it, i) => {
      expect(it.error, `item ${i}`).toBeUndefined();
      expect(shape(it), `item ${i}`).toEqual(reference);
      expect(it.reference).toBe(`r${i}`);
    });
  });

  test('without encrypt_padding_scheme the new ciphertext is PKCS#1 v1.5 too: 200 for valid and invalid padding alike', async () => {
    const answers = await Promise.all(
      Object.values(cases()).map((ct) =>
        post('rewrap/legacy', { ciphertext: ct, decrypt_padding_scheme: 'pkcs1v15' }, rewrapOnly),
      ),
    );
    const reference = shape(answers[0]!.body);
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(shape(a.body)).toEqual(reference);
    }
    const r = answers[0]!.body.data.ciphertext as string;
    const back = ok(await post('decrypt/legacy', { ciphertext: r, padding_scheme: 'pkcs1v15' }));
    expect(Buffer.from(back.body.data.plaintext, 'base64').toString()).toBe('a 32-byte secret for the oracle!');
  });

  test('encrypting with OAEP after a pkcs1v15 decrypt is refused from the request alone, the same for every ciphertext', async () => {
    const answers = await Promise.all(
      Object.values(cases()).map((ct) =>
        post(
          'rewrap/legacy',
          { ciphertext: ct, decrypt_padding_scheme: 'pkcs1v15', encrypt_padding_scheme: 'oaep' },
          rewrapOnly,
        ),
      ),
    );
    for (const a of answers) {
      expect(a.status).toBe(400);
      expect(a.body.errors[0]).toMatch(
        /^encrypt_padding_scheme: must be pkcs1v15 when decrypt_padding_scheme is pkcs1v15/,
      );
    }
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
  });
});

describe('OAEP failures read the same whatever the cause', () => {
  test('wrong scheme, broken bytes, random, a value above the modulus: one status, one message', async () => {
    const m = Buffer.from('oaep secret');
    const good = ok(await post('encrypt/legacy', { plaintext: m.toString('base64') })).body.data.ciphertext as string;
    const flipped = Buffer.from(good.split(':')[2]!, 'base64');
    flipped[100] ^= 0x40;
    const failures = {
      pkcs1Ciphertext: vault(publicEncrypt({ key: pub, padding: constants.RSA_PKCS1_PADDING }, m)),
      flipped: vault(flipped),
      firstByteNonZero: vault(rawRsa(Buffer.concat([Buffer.from([0x01]), randomBytes(K - 1)]))),
      random: vault(Buffer.concat([Buffer.from([0x01]), randomBytes(K - 1)])),
      aboveModulus: vault(Buffer.alloc(K, 0xff)),
    };
    const texts = new Set<string>();
    for (const [name, ct] of Object.entries(failures)) {
      const a = await post('rewrap/legacy', { ciphertext: ct }, rewrapOnly);
      expect(a.status, name).toBe(400);
      expect(a.body.errors, name).toEqual(['failed to RSA decrypt the ciphertext: crypto/rsa: decryption error']);
      texts.add(a.text);
    }
    expect(texts.size).toBe(1);
    expect(ok(await post('rewrap/legacy', { ciphertext: good }, rewrapOnly)).body.data.ciphertext).toMatch(
      /^vault:v1:/,
    );
  });
});
