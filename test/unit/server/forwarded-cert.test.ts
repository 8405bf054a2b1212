/**
 * The client certificate of a forwarded request (src/server/forwarded-cert.ts), under the forwarding
 * signature (src/server/forward-signature.ts): a standby's signature is taken once by the active it
 * names, for the request and chain it was made for; a tampered chain, body, URL, sender or
 * recipient, an old or replayed signature, or another cluster's key is refused with a 400 naming
 * the header.
 */
import { describe, expect, it } from 'vitest';
import { chainValue, peerChain } from '../../../src/server/forwarded-cert.js';
import { ForwardSignature, type SignedRequest } from '../../../src/server/forward-signature.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import { KeyholdError } from '../../../src/framework/errors.js';

const leaf = Buffer.from('leaf certificate bytes');
const inter = Buffer.from('intermediate certificate bytes');
const req: SignedRequest = {
  method: 'POST',
  url: '/v1/auth/cert/login',
  body: Buffer.from('{"name":"people"}'),
  from: 'standby-1',
  to: 'active-1',
  chain: chainValue([leaf]),
  client: '203.0.113.7',
};
const withChain = (chain: Buffer[], r = req): SignedRequest => ({ ...r, chain: chainValue(chain) });

async function cluster() {
  const storage = new InmemBackend();
  const active = new ForwardSignature(storage);
  await active.ensureKey();
  const standby = new ForwardSignature(storage); // another node: reads the same key
  return { active, standby, storage };
}

async function refused(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(KeyholdError);
    expect((e as KeyholdError).kind).toBe('invalid');
    return (e as Error).message;
  }
  throw new Error('expected a refusal');
}

const accept = (t: ForwardSignature, headers: Record<string, string>, r = req, self = 'active-1') =>
  t
    .verify({ ...headers, 'x-keyhold-forwarded-by': r.from }, { method: r.method, url: r.url, body: r.body }, self)
    .then((a) => a.peer);

describe('forwarded client certificates', () => {
  it('carry the chain leaf first and are taken once by the active they name', async () => {
    const { active, standby } = await cluster();
    const headers = await standby.sign(withChain([leaf, inter]));
    expect(Object.keys(headers).sort()).toEqual([
      'x-keyhold-forward-sig',
      'x-keyhold-forwarded-client-cert',
      'x-keyhold-forwarded-for',
    ]);
    const peer = await accept(active, headers);
    expect(peerChain(peer)).toEqual([leaf, inter]);
    expect(await refused(accept(active, headers))).toMatch(/replayed/);
  });

  it('refuse a changed chain, body, URL, sender or recipient', async () => {
    const { active, standby } = await cluster();
    const fresh = () => standby.sign(req);
    const other = Buffer.from('someone else').toString('base64');
    expect(await refused(accept(active, { ...(await fresh()), 'x-keyhold-forwarded-client-cert': other }))).toMatch(
      /^X-Keyhold-Forwarded-Client-Cert: the signature does not verify/,
    );
    expect(await refused(accept(active, await fresh(), { ...req, body: Buffer.from('{}') }))).toMatch(/verify/);
    expect(await refused(accept(active, await fresh(), { ...req, url: '/v1/auth/cert/login?x=1' }))).toMatch(/verify/);
    expect(await refused(accept(active, await fresh(), { ...req, from: 'mallory' }))).toMatch(/verify/);
    expect(await refused(accept(active, await fresh(), req, 'active-2'))).toMatch(/verify/);
  });

  it("refuse an old signature, another cluster's key, a missing or malformed signature", async () => {
    const { active, standby } = await cluster();
    const realNow = Date.now;
    let headers: Record<string, string>;
    try {
      Date.now = () => realNow() - 60_000;
      headers = await standby.sign(req);
    } finally {
      Date.now = realNow;
    }
    expect(await refused(accept(active, headers))).toMatch(/too old/);

    const elsewhere = new ForwardSignature(new InmemBackend());
    await elsewhere.ensureKey();
    expect(await refused(accept(active, await elsewhere.sign(req)))).toMatch(/verify/);

    const only = { 'x-keyhold-forwarded-client-cert': leaf.toString('base64') };
    expect(await refused(accept(active, only))).toMatch(
      /^X-Keyhold-Forwarded-Client-Cert: sent without X-Keyhold-Forward-Sig/,
    );
    expect(await refused(accept(active, { ...only, 'x-keyhold-forward-sig': 'v1:1:2:3' }))).toMatch(/malformed/);
    // A signature made for a chain, sent without it: the chain cannot be dropped (or swapped) unseen.
    const signed = await standby.sign(req);
    expect(
      await refused(
        accept(active, {
          'x-keyhold-forward-sig': signed['x-keyhold-forward-sig']!,
          'x-keyhold-forwarded-for': signed['x-keyhold-forwarded-for']!,
        }),
      ),
    ).toMatch(/^X-Keyhold-Forward-Sig: the signature does not verify/);
  });

  it('refuse a signed chain that is not a chain', async () => {
    const { active, standby } = await cluster();
    expect(await refused(accept(active, await standby.sign({ ...req, chain: 'AAAA,,AAAA' })))).toMatch(
      /^X-Keyhold-Forwarded-Client-Cert: the chain is malformed/,
    );
  });

  it('without a certificate sign the request only; before the cluster has a key, nothing', async () => {
    const { active, standby } = await cluster();
    const plain = await standby.sign(withChain([]));
    expect(Object.keys(plain).sort()).toEqual(['x-keyhold-forward-sig', 'x-keyhold-forwarded-for']);
    expect(await accept(active, plain, withChain([]))).toBeUndefined();
    expect(await new ForwardSignature(new InmemBackend()).sign(req)).toEqual({});
  });

  it("carry the client's address, signed: the active takes it only as signed", async () => {
    const { active, standby } = await cluster();
    const headers = await standby.sign(req);
    expect(headers['x-keyhold-forwarded-for']).toBe('203.0.113.7');
    const ok = await active.verify(
      { ...headers, 'x-keyhold-forwarded-by': req.from },
      { method: req.method, url: req.url, body: req.body },
      'active-1',
    );
    expect(ok.client).toBe('203.0.113.7');
    // Another address under the same signature does not verify; neither does a missing one.
    const moved = await standby.sign(req);
    expect(await refused(accept(active, { ...moved, 'x-keyhold-forwarded-for': '10.0.0.1' }))).toMatch(/verify/);
    const { 'x-keyhold-forwarded-for': _gone, ...without } = await standby.sign(req);
    expect(await refused(accept(active, without))).toMatch(/X-Keyhold-Forwarded-For/);
  });
});
