/** STS sessions (src/sync/destinations/aws-sts.ts): cached while valid, renewed before they end, errors classified. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../../src/sync/http-client.js';
import { NetworkGuard } from '../../../src/sync/network-guard.js';
import { StsSessions } from '../../../src/sync/destinations/aws-sts.js';
import { SyncFailure } from '../../../src/sync/failure.js';
import { FakeServer } from '../../fakes/fake-server.js';

let now = Date.UTC(2026, 0, 1);
let issued = 0;
let fail: number | null = null;
const server = new FakeServer((r) => {
  if (fail)
    return {
      status: fail,
      text: '<ErrorResponse><Error><Code>AccessDenied</Code><Message>no</Message></Error></ErrorResponse>',
    };
  issued++;
  const form = new URLSearchParams(r.text);
  expect(form.get('Action')).toBe('AssumeRole');
  // A 10-minute session.
  const exp = new Date(now + 600_000).toISOString();
  return {
    status: 200,
    text: `<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>ASIA${issued}</AccessKeyId><SecretAccessKey>s&amp;${issued}</SecretAccessKey><SessionToken>tok${issued}</SessionToken><Expiration>${exp}</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>`,
  };
});
let sts: StsSessions;

beforeAll(async () => {
  await server.start();
  const guard = new NetworkGuard({
    granularity: 'secret-path',
    custom_tags: {},
    allowed_ipv4_addresses: ['127.0.0.1/32'],
    allowed_ipv6_addresses: [],
    allowed_ports: [server.port],
    disable_strict_networking: false,
  });
  sts = new StsSessions(
    new HttpClient(guard, 2000),
    server.url,
    'us-east-1',
    {
      kind: 'assume-role',
      source: async () => ({ accessKeyId: 'AKID', secretAccessKey: 'secret' }),
      roleArn: 'arn:aws:iam::123456789012:role/r',
      sessionName: 'keyhold',
    },
    () => now,
  );
});
afterAll(() => server.stop());

describe('StsSessions', () => {
  it('caches a session while it is valid and renews it 5 minutes before it ends', async () => {
    const a = await sts.credentials();
    expect(a).toMatchObject({ accessKeyId: 'ASIA1', secretAccessKey: 's&1', sessionToken: 'tok1' });
    now += 4 * 60_000; // 6 minutes left
    expect((await sts.credentials()).accessKeyId).toBe('ASIA1');
    now += 2 * 60_000; // 4 minutes left: renewed
    const [b, c] = await Promise.all([sts.credentials(), sts.credentials()]);
    expect(b.accessKeyId).toBe('ASIA2');
    expect(c).toBe(b); // one request for concurrent callers
    expect(issued).toBe(2);
  });

  it('an STS refusal is a CLIENT_SIDE_ERROR naming the code; a 5xx is retryable', async () => {
    now += 60 * 60_000;
    fail = 403;
    const e = (await sts.credentials().catch((x: unknown) => x)) as SyncFailure;
    expect(e).toBeInstanceOf(SyncFailure);
    expect(e.status).toBe('CLIENT_SIDE_ERROR');
    expect(e.message).toMatch(/AssumeRole: HTTP 403 AccessDenied/);
    fail = 503;
    const e2 = (await sts.credentials().catch((x: unknown) => x)) as SyncFailure;
    expect(e2.status).toBe('EXTERNAL_SERVICE_ERROR');
    expect(e2.opts.retryable).toBe(true);
    fail = null;
  });
});
