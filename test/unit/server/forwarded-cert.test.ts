/**
 * The signed client certificate of a forwarded request (src/server/forwarded-cert.ts): a standby's
 * signature is taken once by the active it names, for the request it was made for; a tampered
 * chain, body, URL, sender or recipient, an old or replayed signature, or another cluster's key is
 * refused with a 400 naming the header.
 */
import { describe, expect, it } from 'vitest';
import { ForwardedCertTrust, peerChain, type SignedRequest } from '../../../src/server/forwarded-cert.js';
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
};

async function cluster() {
  const storage = new InmemBackend();
  const active = new ForwardedCertTrust(storage);
  await active.ensureKey();
  const standby = new ForwardedCertTrust(storage); // another node: reads the same key
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

const accept = (t: ForwardedCertTrust, headers: Record<string, string>, r = req, self = 'active-1') =>
  t.accept({ ...headers, 'x-keyhold-forwarded-by': r.from }, { method: r.method, url: r.url, body: r.body }, self);

describe('forwarded client certificates', () => {
  it('carry the chain leaf first and are taken once by the active they name', async () => {
    const { active, standby } = await cluster();
    const headers = await standby.sign([leaf, inter], req);
    expect(Object.keys(headers).sort()).toEqual([
      'x-keyhold-forwarded-client-cert',
      'x-keyhold-forwarded-client-cert-sig',
    ]);
    const peer = await accept(active, headers);
    expect(peerChain(peer)).toEqual([leaf, inter]);
    expect(await refused(accept(active, headers))).toMatch(/replayed/);
  });

  it('refuse a changed chain, body, URL, sender or recipient', async () => {
    const { active, standby } = await cluster();
    const fresh = () => standby.sign([leaf], req);
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
      headers = await standby.sign([leaf], req);
    } finally {
      Date.now = realNow;
    }
    expect(await refused(accept(active, headers))).toMatch(/too old/);

    const elsewhere = new ForwardedCertTrust(new InmemBackend());
    await elsewhere.ensureKey();
    expect(await refused(accept(active, await elsewhere.sign([leaf], req)))).toMatch(/verify/);

    const only = { 'x-keyhold-forwarded-client-cert': leaf.toString('base64') };
    expect(await refused(accept(active, only))).toMatch(/sent without X-Keyhold-Forwarded-Client-Cert-Sig/);
    expect(await refused(accept(active, { ...only, 'x-keyhold-forwarded-client-cert-sig': 'v1:1:2:3' }))).toMatch(
      /malformed/,
    );
    expect(
      await refused(
        accept(active, {
          'x-keyhold-forwarded-client-cert-sig': (await standby.sign([leaf], req))[
            'x-keyhold-forwarded-client-cert-sig'
          ]!,
        }),
      ),
    ).toMatch(/^X-Keyhold-Forwarded-Client-Cert-Sig: sent without/);
  });

  it('sign nothing without a certificate, or before the cluster has a key', async () => {
    const { standby } = await cluster();
    expect(await standby.sign([], req)).toEqual({});
    expect(await new ForwardedCertTrust(new InmemBackend()).sign([leaf], req)).toEqual({});
  });
});
