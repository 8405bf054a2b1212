/**
 * AWS STS for provider-a-sm without static keys (issue 31 part 2): AssumeRole from the given keys or
 * the default credential chain (`role_arn`, `external_id`, `role_session_name`), or
 * AssumeRoleWithWebIdentity with keyhold's own identity token (`identity_token_audience`,
 * `identity_token_ttl`, `identity_token_key`). Query protocol (POST form, XML answer) to
 * `sts_endpoint` (default the regional endpoint). Sessions are cached and renewed before they end.
 */
import { SyncFailure } from '../failure.js';
import { failureOf, ok, type HttpClient, type HttpReply } from '../http-client.js';
import { signedFormHeaders, type AwsCredentials } from '../aws-sigv4.js';
import type { IdentityTokenSigner } from '../identity-token.js';

/** STS API version of the query protocol. */
const STS_VERSION = '2011-06-15';
/** Session length asked for (STS's default; the minimum is 900 s). */
export const SESSION_SECONDS = 3600;
/** A session is renewed this long before it ends (or at half its life when shorter). */
const RENEW_BEFORE_MS = 5 * 60_000;

/** The regional STS endpoint of `region`. */
export function defaultStsEndpoint(region: string): string {
  return `https://sts.${region}.amazonaws.com`;
}

/** The text of the first `<tag>` of an XML document, XML entities decoded. */
function xmlText(xml: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml);
  return m
    ? m[1]!
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&apos;/g, "'")
        .replace(/&amp;/g, '&')
    : undefined;
}

function stsFailure(reply: HttpReply, what: string, now: number): SyncFailure {
  return failureOf(
    reply,
    what,
    () => `${xmlText(reply.text, 'Code') ?? ''} ${xmlText(reply.text, 'Message') ?? ''}`.trim(),
    now,
  );
}

/** How a destination gets its session. */
export type SessionSource =
  | {
      kind: 'assume-role';
      source: () => Promise<AwsCredentials>;
      roleArn: string;
      externalId?: string;
      sessionName: string;
    }
  | {
      kind: 'web-identity';
      signer: IdentityTokenSigner;
      roleArn: string;
      sessionName: string;
      audience: string;
      subject: string;
      ttlSeconds: number;
      keyName: string;
    };

/** Temporary credentials from STS, cached until shortly before they end. */
export class StsSessions {
  private current: AwsCredentials | null = null;
  private pending: Promise<AwsCredentials> | null = null;
  /** Sessions obtained so far (tests, logs). */
  sessions = 0;

  constructor(
    private readonly http: HttpClient,
    private readonly endpoint: string,
    private readonly region: string,
    private readonly how: SessionSource,
    private readonly now: () => number,
  ) {}

  /** Valid credentials: the cached session, or a new one. */
  credentials(): Promise<AwsCredentials> {
    const c = this.current;
    if (c?.expiration) {
      const end = c.expiration.getTime();
      const life = end - this.now();
      if (life > Math.min(RENEW_BEFORE_MS, SESSION_SECONDS * 500)) return Promise.resolve(c);
    }
    this.pending ??= this.fetch().finally(() => (this.pending = null));
    return this.pending;
  }

  private async fetch(): Promise<AwsCredentials> {
    const h = this.how;
    const form = new URLSearchParams({
      Version: STS_VERSION,
      RoleArn: h.roleArn,
      RoleSessionName: h.sessionName,
      DurationSeconds: String(SESSION_SECONDS),
    });
    const url = new URL(this.endpoint.replace(/\/+$/, '') + '/');
    let headers: Record<string, string>;
    let what: string;
    if (h.kind === 'assume-role') {
      form.set('Action', 'AssumeRole');
      if (h.externalId) form.set('ExternalId', h.externalId);
      what = 'STS AssumeRole';
      let source: AwsCredentials;
      try {
        source = await h.source();
      } catch (e) {
        throw new SyncFailure(
          'CLIENT_SIDE_ERROR',
          `${what}: no source credentials (${String((e as Error)?.message ?? e).slice(0, 200)})`,
        );
      }
      headers = signedFormHeaders(url, form.toString(), source, this.region, 'sts', this.now());
    } else {
      form.set('Action', 'AssumeRoleWithWebIdentity');
      what = 'STS AssumeRoleWithWebIdentity';
      form.set('WebIdentityToken', await h.signer.sign({ sub: h.subject, aud: h.audience }, h.ttlSeconds, h.keyName));
      headers = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };
    }
    const reply = await this.http.send({
      method: 'POST',
      url: url.toString(),
      headers: { ...headers, accept: 'application/xml' },
      body: form.toString(),
      what,
    });
    if (!ok(reply)) throw stsFailure(reply, what, this.now());
    const accessKeyId = xmlText(reply.text, 'AccessKeyId');
    const secretAccessKey = xmlText(reply.text, 'SecretAccessKey');
    const sessionToken = xmlText(reply.text, 'SessionToken');
    const expiration = xmlText(reply.text, 'Expiration');
    if (!accessKeyId || !secretAccessKey || !sessionToken)
      throw new SyncFailure('EXTERNAL_SERVICE_ERROR', `${what}: answer without credentials`, { retryable: true });
    const exp = expiration ? new Date(expiration) : new Date(this.now() + SESSION_SECONDS * 1000);
    this.current = {
      accessKeyId,
      secretAccessKey,
      sessionToken,
      expiration: Number.isNaN(exp.getTime()) ? new Date(this.now() + SESSION_SECONDS * 1000) : exp,
    };
    this.sessions++;
    return this.current;
  }
}
