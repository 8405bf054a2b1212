/**
 * A strict STS front for moto (which accepts any web identity token and any signature): forwards
 * AWS requests to moto, but first checks what AWS STS checks.
 * - AssumeRole: a SigV4 signature recomputed independently (the AWS SDK's own signer,
 *   @smithy/signature-v4) over the same request; a mismatch is 403 SignatureDoesNotMatch.
 * - AssumeRoleWithWebIdentity: the token's signature against the issuer's JWKS (fetched, as AWS
 *   fetches it from the OIDC provider's jwks_uri), `iss` equal to the registered provider URL,
 *   `aud` one of the registered client ids, expiry and not-before, `sub` matching the trust policy's
 *   condition when one is set; otherwise 400 InvalidIdentityToken / 403 AccessDenied
 *   (docs.aws.amazon.com STS API reference, AssumeRoleWithWebIdentity errors).
 * Every Secrets Manager call's access key id is recorded (which credentials were used).
 */
import { request } from 'node:http';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { SignatureV4 } from '@smithy/signature-v4';
import { FakeServer, type FakeReply, type FakeRequest } from './fake-server.js';

const stsError = (status: number, code: string, message: string): FakeReply => ({
  status,
  headers: { 'Content-Type': 'text/xml' },
  text: `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>fake</RequestId></ErrorResponse>`,
});

/** A registered OIDC provider and the role trust condition. */
export interface TrustedIssuer {
  issuer: string;
  jwks: () => Promise<JSONWebKeySet>;
  audiences: string[];
  /** Required `sub` (the trust policy's `<provider>:sub` condition), when set. */
  subject?: string;
}

export class StsFront {
  readonly server: FakeServer;
  /** Secret keys of the long-term access keys the front knows (access key id -> secret). */
  readonly secrets = new Map<string, string>([['testing', 'testing']]);
  trusted: TrustedIssuer | null = null;
  /** STS calls seen: action, role, external id, session name, and for web identity the token. */
  readonly stsCalls: Array<{
    action: string;
    roleArn?: string;
    externalId?: string;
    sessionName?: string;
    token?: string;
    accessKeyId?: string;
  }> = [];
  /** Access key ids of the Secrets Manager calls, in order. */
  readonly smKeys: string[] = [];
  /** Refusals given, by code. */
  readonly refusals: Record<string, number> = {};

  constructor(private readonly target: string) {
    this.server = new FakeServer((r) => this.handle(r));
  }

  get url(): string {
    return this.server.url;
  }
  async start(): Promise<this> {
    await this.server.start();
    return this;
  }
  stop(): Promise<void> {
    return this.server.stop();
  }

  private refuse(status: number, code: string, message: string): FakeReply {
    this.refusals[code] = (this.refusals[code] ?? 0) + 1;
    return stsError(status, code, message);
  }

  private async handle(r: FakeRequest): Promise<FakeReply> {
    const auth = String(r.headers.authorization ?? '');
    const keyId = /Credential=([^/]+)\//.exec(auth)?.[1];
    if (r.headers['x-amz-target']) {
      this.smKeys.push(keyId ?? '');
      return this.forward(r);
    }
    const form = new URLSearchParams(r.text);
    const action = form.get('Action') ?? '';
    const call = {
      action,
      roleArn: form.get('RoleArn') ?? undefined,
      externalId: form.get('ExternalId') ?? undefined,
      sessionName: form.get('RoleSessionName') ?? undefined,
      accessKeyId: keyId,
    };
    if (action === 'AssumeRole') {
      this.stsCalls.push(call);
      const why = await this.checkSignature(r, keyId);
      if (why) return this.refuse(403, 'SignatureDoesNotMatch', why);
    } else if (action === 'AssumeRoleWithWebIdentity') {
      const token = form.get('WebIdentityToken') ?? '';
      this.stsCalls.push({ ...call, token });
      if (auth) return this.refuse(400, 'InvalidParameterValue', 'AssumeRoleWithWebIdentity is not signed');
      const t = this.trusted;
      if (!t) return this.refuse(400, 'InvalidIdentityToken', 'No OpenIDConnect provider found in your account');
      try {
        const { payload } = await jwtVerify(token, createLocalJWKSet(await t.jwks()), {
          issuer: t.issuer,
          audience: t.audiences,
        });
        if (t.subject && payload.sub !== t.subject)
          return this.refuse(403, 'AccessDenied', 'Not authorized to perform sts:AssumeRoleWithWebIdentity');
        if (!payload.exp || !payload.iat) return this.refuse(400, 'InvalidIdentityToken', 'token lacks exp or iat');
      } catch (e) {
        const code =
          (e as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'ExpiredTokenException' : 'InvalidIdentityToken';
        return this.refuse(400, code, `Couldn't verify the token: ${(e as Error).message}`);
      }
    }
    return this.forward(r);
  }

  /** Why the SigV4 signature of `r` is wrong, or null when it verifies. */
  private async checkSignature(r: FakeRequest, keyId: string | undefined): Promise<string | null> {
    const auth = String(r.headers.authorization ?? '');
    if (!keyId) return 'no Authorization header';
    const secret = this.secrets.get(keyId);
    if (!secret) return `unknown access key ${keyId}`;
    const scope = /Credential=[^/]+\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request/.exec(auth);
    const signedHeaders = /SignedHeaders=([^,]+)/.exec(auth)?.[1]?.split(';') ?? [];
    if (!scope) return 'malformed credential scope';
    const headers: Record<string, string> = {};
    for (const h of signedHeaders) headers[h] = String(r.headers[h] ?? '');
    const signer = new SignatureV4({
      credentials: {
        accessKeyId: keyId,
        secretAccessKey: secret,
        ...(r.headers['x-amz-security-token'] ? { sessionToken: String(r.headers['x-amz-security-token']) } : {}),
      },
      region: scope[2]!,
      service: scope[3]!,
      sha256: Sha256,
      applyChecksum: false,
    });
    const amzDate = String(r.headers['x-amz-date'] ?? '');
    const when = new Date(
      `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
    );
    if (Number.isNaN(when.getTime()) || Math.abs(Date.now() - when.getTime()) > 15 * 60_000)
      return 'x-amz-date missing or more than 15 minutes off';
    const signed = await signer.sign(
      {
        method: r.method,
        protocol: 'http:',
        hostname: r.url.hostname,
        port: Number(r.url.port),
        path: r.url.pathname,
        query: {},
        headers: { ...headers },
        body: r.text,
      },
      {
        signingDate: when,
        unsignableHeaders: new Set(Object.keys(r.headers).filter((h) => !signedHeaders.includes(h))),
      },
    );
    const expected = /Signature=([0-9a-f]+)/.exec(
      String(signed.headers.authorization ?? signed.headers.Authorization ?? ''),
    )?.[1];
    const got = /Signature=([0-9a-f]+)/.exec(auth)?.[1];
    return expected && expected === got
      ? null
      : 'The request signature we calculated does not match the signature you provided';
  }

  private forward(r: FakeRequest): Promise<FakeReply> {
    const t = new URL(this.target);
    return new Promise((resolve, reject) => {
      const headers = { ...r.headers };
      delete headers['content-length'];
      const req = request(
        {
          host: t.hostname,
          port: t.port,
          path: r.url.pathname + r.url.search,
          method: r.method,
          headers: { ...headers, 'content-length': String(r.body.length) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const h: Record<string, string> = {};
            for (const [k, v] of Object.entries(res.headers))
              if (
                typeof v === 'string' &&
                !['content-length', 'connection', 'transfer-encoding', 'keep-alive'].includes(k)
              )
                h[k] = v;
            resolve({ status: res.statusCode ?? 502, text: Buffer.concat(chunks).toString('utf8'), headers: h });
          });
        },
      );
      req.on('error', reject);
      req.end(r.body);
    });
  }
}

/** The hash constructor @smithy/signature-v4 takes (SHA-256, HMAC-SHA-256 when given a secret). */
class Sha256 {
  private readonly h: Hash | Hmac;
  constructor(secret?: string | Uint8Array) {
    this.h = secret
      ? createHmac('sha256', typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret)
      : createHash('sha256');
  }
  update(data: string | Uint8Array): void {
    this.h.update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
}
