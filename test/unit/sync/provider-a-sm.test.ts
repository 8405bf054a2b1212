/**
 * The AWS Secrets Manager connector against a fake with the real service's error semantics: the
 * number and order of calls for a first sync (CreateSecret only), an update (PutSecretValue only),
 * and the fallbacks (secret already there, in its recovery window, CreateSecret not permitted).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { providerASm } from '../../../src/sync/destinations/provider-a-sm.js';
import type { Connector } from '../../../src/sync/destinations/common.js';
import { HttpClient } from '../../../src/sync/http-client.js';
import { NetworkGuard } from '../../../src/sync/network-guard.js';
import type { DestinationRecord } from '../../../src/sync/types.js';
import { AwsSmFake } from '../../fakes/aws-sm.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const aws = new AwsSmFake();
let c: Connector;
const signal = new AbortController().signal;

beforeAll(async () => {
  await aws.start();
  const dest: DestinationRecord = {
    type: 'provider-a-sm',
    name: 'd',
    connection: {
      access_key_id: 'AKIAFAKE',
      secret_access_key: 'fake-secret',
      region: 'us-east-1',
      endpoint_url: aws.url,
    },
    options: {
      granularity: 'secret-path',
      custom_tags: { team: 'payments' },
      allowed_ipv4_addresses: ['127.0.0.1/32'],
      allowed_ipv6_addresses: [],
      allowed_ports: [aws.server.port],
      disable_strict_networking: false,
    },
    created_at: '',
    updated_at: '',
    revision: 1,
  };
  const guard = new NetworkGuard(dest.options);
  c = providerASm.connect(dest, {
    guard,
    http: new HttpClient(guard, 5000),
    timeoutMs: 5000,
    now: () => Date.now(),
    logger: silent,
  });
});
afterAll(async () => {
  c?.close();
  await aws.stop();
});
beforeEach(() => {
  aws.calls.length = 0;
  aws.secrets.clear();
  aws.denyCreate = false;
});

describe('provider-a-sm put', () => {
  it('a fresh name is created with one CreateSecret call, tagged', async () => {
    await c.put('vault/a', '{"k":"1"}', signal, { fresh: true });
    expect(aws.calls).toEqual(['CreateSecret']);
    expect(aws.valueOf('vault/a')).toBe('{"k":"1"}');
    expect(aws.secrets.get('vault/a')!.tags).toEqual({ 'hashicorp:vault': '', team: 'payments' });
  });

  it('a known name is updated with one PutSecretValue call', async () => {
    aws.seed('vault/a', 'old');
    await c.put('vault/a', 'new', signal);
    expect(aws.calls).toEqual(['PutSecretValue']);
    expect(aws.valueOf('vault/a')).toBe('new');
  });

  it('a fresh name that already exists is overwritten (CreateSecret, then PutSecretValue)', async () => {
    aws.seed('vault/a', 'made outside keyhold');
    await c.put('vault/a', 'ours', signal, { fresh: true });
    expect(aws.calls).toEqual(['CreateSecret', 'PutSecretValue']);
    expect(aws.valueOf('vault/a')).toBe('ours');
  });

  it('a fresh name in its recovery window is restored, then written', async () => {
    aws.seed('vault/a', 'deleted outside keyhold', { deleted: true });
    await c.put('vault/a', 'ours', signal, { fresh: true });
    expect(aws.calls).toEqual(['CreateSecret', 'PutSecretValue', 'RestoreSecret', 'PutSecretValue']);
    expect(aws.valueOf('vault/a')).toBe('ours');
  });

  it('a known name in its recovery window is restored, then written', async () => {
    aws.seed('vault/a', 'deleted outside keyhold', { deleted: true });
    await c.put('vault/a', 'ours', signal);
    expect(aws.calls).toEqual(['PutSecretValue', 'RestoreSecret', 'PutSecretValue']);
    expect(aws.valueOf('vault/a')).toBe('ours');
  });

  it('a known name that is gone at the provider is created again', async () => {
    await c.put('vault/a', 'v', signal);
    expect(aws.calls).toEqual(['PutSecretValue', 'CreateSecret']);
    expect(aws.valueOf('vault/a')).toBe('v');
  });

  it('without permission to create, an existing secret is still written; a missing one reports the refusal', async () => {
    aws.denyCreate = true;
    aws.seed('vault/a', 'old');
    await c.put('vault/a', 'new', signal, { fresh: true });
    expect(aws.calls).toEqual(['CreateSecret', 'PutSecretValue']);
    expect(aws.valueOf('vault/a')).toBe('new');
    aws.calls.length = 0;
    await expect(c.put('vault/b', 'x', signal, { fresh: true })).rejects.toMatchObject({
      status: 'CLIENT_SIDE_ERROR',
      message: expect.stringMatching(/^CreateSecret: HTTP 400 AccessDeniedException/),
    });
    expect(aws.calls).toEqual(['CreateSecret', 'PutSecretValue']);
  });

  it('a transient 5xx is retried within the call; one that persists is EXTERNAL_SERVICE_ERROR (retryable)', async () => {
    aws.server.failNext({ status: 500 });
    await c.put('vault/a', 'x', signal, { fresh: true });
    expect(aws.calls).toEqual(['CreateSecret']); // the failed attempt never reached the handler
    expect(aws.server.log.slice(-2).map((l) => [l.target, l.status])).toEqual([
      ['secretsmanager.CreateSecret', 500],
      ['secretsmanager.CreateSecret', 200],
    ]);
    expect(aws.valueOf('vault/a')).toBe('x');
    aws.server.failAlways({ status: 503 });
    try {
      await expect(c.put('vault/b', 'x', signal, { fresh: true })).rejects.toMatchObject({
        status: 'EXTERNAL_SERVICE_ERROR',
        retryable: true,
      });
    } finally {
      aws.server.heal();
    }
    expect(aws.server.log.slice(-3).map((l) => l.status)).toEqual([503, 503, 503]);
    expect(aws.valueOf('vault/b')).toBeUndefined();
  });

  it('a call in flight stops when its signal aborts (the SDK client caches its middleware stack, so the signal travels with the command)', async () => {
    aws.server.failNext({ delayMs: 3000 });
    const ctrl = new AbortController();
    const t0 = Date.now();
    const p = c.put('vault/slow', 'x', ctrl.signal, { fresh: true });
    setTimeout(() => ctrl.abort(Object.assign(new Error('operation timed out'), { name: 'TimeoutError' })), 100);
    await expect(p).rejects.toBeDefined();
    expect(Date.now() - t0).toBeLessThan(2000);
    // Calls before and after, on the same client, are not affected by that signal.
    await c.put('vault/after', 'y', signal, { fresh: true });
    expect(aws.valueOf('vault/after')).toBe('y');
    // An already aborted signal sends nothing.
    const before = aws.server.log.length;
    await expect(c.put('vault/never', 'z', AbortSignal.abort(), { fresh: true })).rejects.toBeDefined();
    await new Promise((r) => setTimeout(r, 50));
    expect(aws.server.log.length).toBe(before);
  });
});
