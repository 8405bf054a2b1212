/**
 * provider-c-sm without a service-account key (issue 31 part 3): keyhold's identity token is
 * exchanged at Google's Security Token Service (RFC 8693 token exchange, sts.googleapis.com/v1/token)
 * for a federated access token of the workload identity pool provider named by
 * `identity_token_audience` (//iam.googleapis.com/projects/N/locations/global/workloadIdentityPools/P/providers/X);
 * with `service_account_email` that token then impersonates the service account through IAM
 * Credentials' generateAccessToken, else it is used directly (principal-based access).
 */
import { SyncFailure } from '../failure.js';
import { failureOf, jsonOf, ok } from '../http-client.js';
import type { HttpClient } from '../http-client.js';
import { type FederationParams, signFor } from './federation.js';

export const DEFAULT_GOOGLE_STS = 'https://sts.googleapis.com';
export const DEFAULT_IAM_CREDENTIALS = 'https://iamcredentials.googleapis.com';
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** An access token and when to stop using it (Unix ms). */
export interface GoogleToken {
  value: string;
  expiresAt: number;
}

function detail(b: Record<string, unknown> | null): string {
  const e = b?.error as { status?: string; message?: string } | string | undefined;
  if (typeof e === 'string') return [e, b?.error_description].filter(Boolean).join(' ');
  return [e?.status, e?.message].filter(Boolean).join(' ');
}

/** Cache window: renew a minute before the end, or at half the life of a short token. */
function until(now: number, ttlSeconds: number): number {
  return now + Math.max(0, Math.min(ttlSeconds - 60, ttlSeconds / 2)) * 1000;
}

/** Exchange an identity token for a Google access token (and impersonate `serviceAccount` when set). */
export async function federatedGoogleToken(
  http: HttpClient,
  p: FederationParams,
  opts: { stsEndpoint: string; iamEndpoint: string; serviceAccount: string; now: () => number },
  signal: AbortSignal,
): Promise<GoogleToken> {
  const now = opts.now();
  const body = new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    audience: p.audience,
    scope: SCOPE,
    requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    subject_token: await signFor(p),
  });
  const r = await http.send(
    {
      method: 'POST',
      url: `${opts.stsEndpoint}/v1/token`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: body.toString(),
      what: 'STS token exchange',
    },
    signal,
  );
  if (!ok(r)) throw failureOf(r, 'STS token exchange', detail, now);
  const b = jsonOf(r);
  const federated = typeof b?.access_token === 'string' ? b.access_token : '';
  if (!federated)
    throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'STS token exchange: reply has no access_token', {
      retryable: true,
    });
  const federatedTtl = Number(b?.expires_in ?? 3600);
  if (!opts.serviceAccount) return { value: federated, expiresAt: until(now, federatedTtl) };
  const url = `${opts.iamEndpoint}/v1/projects/-/serviceAccounts/${encodeURIComponent(opts.serviceAccount)}:generateAccessToken`;
  const g = await http.send(
    {
      method: 'POST',
      url,
      headers: { Authorization: `Bearer ${federated}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ scope: [SCOPE], lifetime: '3600s' }),
      what: 'generateAccessToken',
    },
    signal,
  );
  if (!ok(g)) throw failureOf(g, 'generateAccessToken', detail, now);
  const gb = jsonOf(g);
  const value = typeof gb?.accessToken === 'string' ? gb.accessToken : '';
  if (!value)
    throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'generateAccessToken: reply has no accessToken', {
      retryable: true,
    });
  const end = Date.parse(String(gb?.expireTime ?? ''));
  const ttl = Number.isFinite(end) ? Math.max(0, (end - now) / 1000) : 3600;
  return { value, expiresAt: until(now, ttl) };
}
