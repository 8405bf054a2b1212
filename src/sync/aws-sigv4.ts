/**
 * AWS Signature Version 4 (docs.aws.amazon.com "Create a signed AWS API request") for the few
 * query-protocol calls keyhold makes outside the Secrets Manager SDK (STS AssumeRole): a POST of a
 * form body, signed over host, x-amz-date, x-amz-security-token (when the source credentials are a
 * session) and the body's SHA-256.
 */
import { createHash, createHmac } from 'node:crypto';

/** AWS credentials (a session when `sessionToken` is set). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** When a session ends. */
  expiration?: Date;
}

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const hmac = (key: Buffer | string, s: string) => createHmac('sha256', key).update(s, 'utf8').digest();

/** `YYYYMMDDTHHMMSSZ` of `ms`. */
export function amzDate(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/**
 * Headers that sign a POST of `body` (application/x-www-form-urlencoded) to `url` for `service` in
 * `region` at time `nowMs`.
 */
export function signedFormHeaders(
  url: URL,
  body: string,
  creds: AwsCredentials,
  region: string,
  service: string,
  nowMs: number,
): Record<string, string> {
  const date = amzDate(nowMs);
  const day = date.slice(0, 8);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
    host: url.host,
    'x-amz-date': date,
  };
  if (creds.sessionToken) headers['x-amz-security-token'] = creds.sessionToken;
  const names = Object.keys(headers).sort();
  const canonical = [
    'POST',
    url.pathname || '/',
    '', // no query string: the parameters are in the body
    ...names.map((n) => `${n}:${headers[n]!.trim()}`),
    '',
    names.join(';'),
    sha256(body),
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, scope, sha256(canonical)].join('\n');
  const kDate = hmac(`AWS4${creds.secretAccessKey}`, day);
  const kSigning = hmac(hmac(hmac(kDate, region), service), 'aws4_request');
  const signature = createHmac('sha256', kSigning).update(toSign, 'utf8').digest('hex');
  const out: Record<string, string> = {
    ...headers,
    authorization: `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`,
  };
  delete out.host; // node sets Host itself (same value)
  return out;
}
