/**
 * Issue 28 part 1: a request a standby forwarded is counted once. The forwarding proof (HMAC under
 * a key only cluster members hold) is checked here without a daemon, and so is the quota stage's
 * use of it: a proven request passes uncounted, a forged, stale or altered one is counted.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { QuotaManager } from '../../../src/quotas/quota-manager.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import type { MountInfo } from '../../../src/framework/context.js';
import {
  FORWARD_PROOF_HEADER,
  FORWARD_PROOF_MAX_AGE_MS,
  deriveForwardKey,
  signForward,
  verifyForward,
} from '../../../src/server/forward-proof.js';
import { FORWARDED_HEADER } from '../../../src/server/forward.js';
import { quotaStep, type QuotaFlow } from '../../../src/server/quota-stage.js';
import type { ResponseSink } from '../../../src/server/respond.js';

const indexKey = randomBytes(32);
const key = deriveForwardKey(indexKey);
const body = Buffer.from('{"plaintext":"eA=="}');
const url = '/v1/transit/encrypt/k';
const t0 = 1_800_000_000_000;

describe('forwarding proof', () => {
  const proof = signForward(key, 'node-a', 'POST', url, body, t0);

  it('verifies for the same node, method, target and body within the time window', () => {
    expect(proof).toMatch(/^v1\.\d+\.[0-9a-f]{64}$/);
    expect(verifyForward(key, proof, 'node-a', 'POST', url, body, t0)).toBe(true);
    expect(verifyForward(key, proof, 'node-a', 'POST', url, body, t0 + FORWARD_PROOF_MAX_AGE_MS)).toBe(true);
    expect(verifyForward(key, proof, 'node-a', 'POST', url, body, t0 - 1000)).toBe(true); // skew
  });

  it('fails for anything else', () => {
    const other = deriveForwardKey(randomBytes(32));
    expect(verifyForward(other, proof, 'node-a', 'POST', url, body, t0)).toBe(false);
    expect(verifyForward(key, proof, 'node-b', 'POST', url, body, t0)).toBe(false);
    expect(verifyForward(key, proof, 'node-a', 'PUT', url, body, t0)).toBe(false);
    expect(verifyForward(key, proof, 'node-a', 'POST', '/v1/transit/encrypt/j', body, t0)).toBe(false);
    expect(verifyForward(key, proof, 'node-a', 'POST', url, Buffer.from('{}'), t0)).toBe(false);
    expect(verifyForward(key, proof, 'node-a', 'POST', url, body, t0 + FORWARD_PROOF_MAX_AGE_MS + 1)).toBe(false);
    expect(verifyForward(key, proof, undefined, 'POST', url, body, t0)).toBe(false);
    expect(verifyForward(key, [proof, proof], 'node-a', 'POST', url, body, t0)).toBe(false);
    for (const forged of ['', 'v1', 'v1.1.2', `v2${proof.slice(2)}`, proof.toUpperCase(), `${proof}00`, 'v1..'])
      expect(verifyForward(key, forged, 'node-a', 'POST', url, body, t0), forged).toBe(false);
  });

  it('is not the index key itself (an X-Vault-Index MAC never serves as a proof)', () => {
    expect(key.equals(indexKey)).toBe(false);
    expect(key).toHaveLength(32);
  });

  it('treats LIST and LOCK (the node:http spelling of LIST) alike', () => {
    const p = signForward(key, 'n', 'LIST', '/v1/transit/keys', Buffer.alloc(0), t0);
    expect(verifyForward(key, p, 'n', 'LOCK', '/v1/transit/keys', Buffer.alloc(0), t0)).toBe(true);
  });
});

describe('quota stage and forwarded requests', () => {
  const mount = { path: 'transit/' } as MountInfo;

  async function setup() {
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
    const cluster = {
      forwardedByMember: (req: QuotaFlow['req'], b: Buffer) =>
        verifyForward(
          key,
          req.headers[FORWARD_PROOF_HEADER],
          req.headers[FORWARDED_HEADER],
          req.method ?? '',
          req.url ?? '',
          b,
          Date.now(),
        ),
    };
    const core = { quotas, cluster, logger: { warn: () => {} } };
    const statuses: number[] = [];
    const send = (from: string, headers: IncomingHttpHeaders, b = body): boolean => {
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
        rawBody: b,
        res,
        mounted: { mount, instance: {} },
      };
      const refused = quotaStep(core, f);
      if (typeof refused !== 'boolean') throw new Error('no role lookup expected');
      return refused;
    };
    return { send, statuses };
  }

  it('lets a proven forwarded request through uncounted, and counts the sender otherwise', async () => {
    const { send } = await setup();
    const proven = () => ({
      [FORWARDED_HEADER]: 'standby-1',
      [FORWARD_PROOF_HEADER]: signForward(key, 'standby-1', 'POST', url, body, Date.now()),
    });
    // The standby's address: its proven requests never use up its bucket.
    for (let i = 0; i < 5; i++) expect(send('10.0.0.2', proven())).toBe(false);
    expect(send('10.0.0.2', {})).toBe(false);
    expect(send('10.0.0.2', {})).toBe(false);
    expect(send('10.0.0.2', {})).toBe(true); // 429: the third in the interval
    expect(send('10.0.0.2', proven())).toBe(false); // still not counted, not refused
  });

  it('counts a request whose proof is forged, stale, for another body or from no cluster member', async () => {
    const { send, statuses } = await setup();
    const other = deriveForwardKey(randomBytes(32));
    const forged = {
      [FORWARDED_HEADER]: 'standby-1',
      [FORWARD_PROOF_HEADER]: signForward(other, 'standby-1', 'POST', url, body, Date.now()),
    };
    expect(send('10.0.0.9', forged)).toBe(false);
    const stale = {
      [FORWARDED_HEADER]: 'standby-1',
      [FORWARD_PROOF_HEADER]: signForward(
        key,
        'standby-1',
        'POST',
        url,
        body,
        Date.now() - 2 * FORWARD_PROOF_MAX_AGE_MS,
      ),
    };
    expect(send('10.0.0.9', stale)).toBe(false);
    const otherBody = {
      [FORWARDED_HEADER]: 'standby-1',
      [FORWARD_PROOF_HEADER]: signForward(key, 'standby-1', 'POST', url, Buffer.from('{}'), Date.now()),
    };
    expect(send('10.0.0.9', otherBody)).toBe(true); // third counted request: refused
    expect(statuses).toEqual([429]);
  });
});
