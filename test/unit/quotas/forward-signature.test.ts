/**
 * Issue 28 part 1, on the one forwarding signature (src/server/forward-signature.ts): a request a
 * standby forwarded is counted once. The signature (HMAC under a key only cluster members hold) is
 * checked here without a daemon, and so is the quota stage's use of it: a request the router's
 * forwarded stage proved passes uncounted; one with a forged, stale, replayed or altered signature
 * is refused with a 400 naming the header (never served, never let through uncounted), and one
 * without the header is counted as any client's.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { QuotaManager } from '../../../src/quotas/quota-manager.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import type { MountInfo } from '../../../src/framework/context.js';
import { KeyholdError } from '../../../src/framework/errors.js';
import {
  FORWARDING_KEY_PATH,
  FORWARD_SIG_HEADER,
  FORWARD_SIG_MAX_AGE_MS,
  ForwardSignature,
  carriesForwarding,
  type SignedRequest,
} from '../../../src/server/forward-signature.js';
import { FORWARDED_HEADER } from '../../../src/server/forward.js';
import { quotaStep, type QuotaFlow } from '../../../src/server/quota-stage.js';
import type { ResponseSink } from '../../../src/server/respond.js';

const body = Buffer.from('{"plaintext":"eA=="}');
const url = '/v1/transit/encrypt/k';
const t0 = 1_800_000_000_000;
const req: SignedRequest = { method: 'POST', url, body, from: 'node-a', to: 'active', chain: '', client: '127.0.0.2' };

/** Run `fn` with Date.now() at `at`. */
async function at<T>(when: number, fn: () => Promise<T>): Promise<T> {
  const real = Date.now;
  Date.now = () => when;
  try {
    return await fn();
  } finally {
    Date.now = real;
  }
}

async function keyed(): Promise<{ active: ForwardSignature; standby: ForwardSignature; storage: InmemBackend }> {
  const storage = new InmemBackend();
  const active = new ForwardSignature(storage);
  await active.ensureKey();
  return { active, standby: new ForwardSignature(storage), storage };
}

/** True when `active` takes the headers for `r` (sent by `from`) at `when`. */
async function takes(
  active: ForwardSignature,
  headers: IncomingHttpHeaders,
  r: Pick<SignedRequest, 'method' | 'url' | 'body'>,
  from: string | undefined,
  when: number,
): Promise<boolean> {
  const h = from === undefined ? headers : { ...headers, [FORWARDED_HEADER]: from };
  return at(when, () => active.verify(h, r, 'active')).then(
    () => true,
    (e: unknown) => {
      expect(e).toBeInstanceOf(KeyholdError);
      expect((e as Error).message).toMatch(/^X-Keyhold-Forward-Sig: /);
      return false;
    },
  );
}

describe('forwarding signature', () => {
  it('verifies for the same node, method, target and body within the time window', async () => {
    const { active, standby } = await keyed();
    for (const when of [t0, t0 + FORWARD_SIG_MAX_AGE_MS, t0 - 1000]) {
      const h = await at(t0, () => standby.sign(req));
      expect(h[FORWARD_SIG_HEADER]).toMatch(/^v1:\d+:[0-9a-f]{32}:[0-9a-f]{64}$/);
      expect(await takes(active, h, req, 'node-a', when), String(when - t0)).toBe(true);
    }
  });

  it('fails for anything else', async () => {
    const { active, standby } = await keyed();
    const sign = () => at(t0, () => standby.sign(req));
    const other = new ForwardSignature(new InmemBackend());
    await other.ensureKey();
    expect(await takes(active, await at(t0, () => other.sign(req)), req, 'node-a', t0)).toBe(false);
    expect(await takes(active, await sign(), req, 'node-b', t0)).toBe(false);
    expect(await takes(active, await sign(), { ...req, method: 'PUT' }, 'node-a', t0)).toBe(false);
    expect(await takes(active, await sign(), { ...req, url: '/v1/transit/encrypt/j' }, 'node-a', t0)).toBe(false);
    expect(await takes(active, await sign(), { ...req, body: Buffer.from('{}') }, 'node-a', t0)).toBe(false);
    expect(await takes(active, await sign(), req, 'node-a', t0 + FORWARD_SIG_MAX_AGE_MS + 1)).toBe(false);
    expect(await takes(active, await sign(), req, undefined, t0)).toBe(false);
    const proof = (await sign())[FORWARD_SIG_HEADER]!;
    expect(await takes(active, { [FORWARD_SIG_HEADER]: [proof, proof] }, req, 'node-a', t0)).toBe(false);
    for (const forged of ['', 'v1', 'v1:1:2', `v2${proof.slice(2)}`, proof.toUpperCase(), `${proof}00`, 'v1:::'])
      expect(await takes(active, { [FORWARD_SIG_HEADER]: forged }, req, 'node-a', t0), forged).toBe(false);
  });

  it('is taken once: a replayed signature is refused', async () => {
    const { active, standby } = await keyed();
    const h = await at(t0, () => standby.sign(req));
    expect(await takes(active, h, req, 'node-a', t0)).toBe(true);
    expect(await takes(active, h, req, 'node-a', t0 + 1)).toBe(false);
  });

  it('uses the barrier key core/forwarding-hmac-key, created once by the active (32 random bytes)', async () => {
    const { active, storage } = await keyed();
    const k = await storage.get(FORWARDING_KEY_PATH);
    expect(k).toHaveLength(32);
    await active.ensureKey();
    await new ForwardSignature(storage).ensureKey();
    expect((await storage.get(FORWARDING_KEY_PATH))!.equals(k!)).toBe(true);
  });

  it('treats LIST and LOCK (the node:http spelling of LIST) alike', async () => {
    const { active, standby } = await keyed();
    const list = { ...req, method: 'LIST', url: '/v1/transit/keys', body: Buffer.alloc(0) };
    const h = await at(t0, () => standby.sign(list));
    expect(await takes(active, h, { ...list, method: 'LOCK' }, 'node-a', t0)).toBe(true);
  });
});

describe('quota stage and forwarded requests', () => {
  const mount = { path: 'transit/' } as MountInfo;

  async function setup() {
    const { active, standby } = await keyed();
    const quotas = new QuotaManager(new InmemBackend(), () => Date.now());
    await quotas.put({
      name: 'cap',
      path: 'transit/encrypt/k',
      mount_path: 'transit/',
      path_suffix: 'encrypt/k',
      role: '',
      rate: 2,
      interval: 60,
      block_interval: 0,
      inheritable: false,
    });
    const core = { quotas, logger: { warn: () => {} } };
    const statuses: number[] = [];
    /** The router's order: the forwarded stage (400 when the signature fails), then the quota step. */
    const send = async (from: string, headers: IncomingHttpHeaders, b = body): Promise<boolean | 400> => {
      const res: ResponseSink = {
        headersSent: false,
        writeHead: (s: number) => statuses.push(s),
        end: () => {},
        destroy: () => {},
      };
      const f: QuotaFlow = {
        path: 'transit/encrypt/k',
        sub: 'encrypt/k',
        op: 'update',
        requestId: 'r',
        raw: {},
        req: { method: 'POST', url, socket: { remoteAddress: from }, headers },
        forwardedByMember: false,
        res,
        mounted: { mount, instance: {} },
      };
      if (carriesForwarding(headers)) {
        try {
          await active.verify(headers, { method: 'POST', url, body: b }, 'active');
        } catch {
          return 400;
        }
        f.forwardedByMember = true;
      }
      const refused = quotaStep(core, f);
      if (typeof refused !== 'boolean') throw new Error('no role lookup expected');
      return refused;
    };
    return { send, statuses, standby };
  }

  it('lets a proven forwarded request through uncounted, and counts the sender otherwise', async () => {
    const { send, standby } = await setup();
    const proven = async () => ({
      [FORWARDED_HEADER]: 'standby-1',
      ...(await standby.sign({ ...req, from: 'standby-1' })),
    });
    // The standby's address: its proven requests never use up its bucket.
    for (let i = 0; i < 5; i++) expect(await send('10.0.0.2', await proven())).toBe(false);
    expect(await send('10.0.0.2', {})).toBe(false);
    expect(await send('10.0.0.2', {})).toBe(false);
    expect(await send('10.0.0.2', {})).toBe(true); // 429: the third in the interval
    expect(await send('10.0.0.2', await proven())).toBe(false); // still not counted, not refused
  });

  it('refuses (400, uncounted, unserved) a request whose signature is forged, stale, replayed or for another body', async () => {
    const { send, statuses, standby } = await setup();
    const other = new ForwardSignature(new InmemBackend());
    await other.ensureKey();
    const from = { ...req, from: 'standby-1' };
    const forged = { [FORWARDED_HEADER]: 'standby-1', ...(await other.sign(from)) };
    expect(await send('10.0.0.9', forged)).toBe(400);
    const stale = {
      [FORWARDED_HEADER]: 'standby-1',
      ...(await at(Date.now() - 2 * FORWARD_SIG_MAX_AGE_MS, () => standby.sign(from))),
    };
    expect(await send('10.0.0.9', stale)).toBe(400);
    const otherBody = {
      [FORWARDED_HEADER]: 'standby-1',
      ...(await standby.sign({ ...from, body: Buffer.from('{}') })),
    };
    expect(await send('10.0.0.9', otherBody)).toBe(400);
    const once = { [FORWARDED_HEADER]: 'standby-1', ...(await standby.sign(from)) };
    expect(await send('10.0.0.9', once)).toBe(false);
    expect(await send('10.0.0.9', once)).toBe(400); // replayed
    // None of them used the client's quota: it still has both of its requests.
    expect(await send('10.0.0.9', {})).toBe(false);
    expect(await send('10.0.0.9', {})).toBe(false);
    expect(await send('10.0.0.9', {})).toBe(true);
    expect(statuses).toEqual([429]);
  });
});
