/**
 * Where a JWT mount gets its verification keys (vault-plugin-auth-jwt path_config.go): static PEM
 * public keys, a JWKS URL, or OIDC discovery (whose `jwks_uri` is then used). JWKS are fetched with
 * jose's remote key set: cached, refetched when a token names an unknown `kid`, at most once per
 * cooldown, so a flood of forged kids cannot make keyhold hammer the provider.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { get as httpGet, type Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, get as httpsGet } from 'node:https';
import { createRemoteJWKSet, type JWTHeaderParameters, type FlattenedJWSInput } from 'jose';
import { invalid } from '../../framework/errors.js';

/** At most one JWKS refetch (unknown kid) per this many ms. */
export const JWKS_COOLDOWN_MS = 5_000;
/** Cached JWKS are refreshed after this long even when every kid is known. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 10_000;
/** Largest discovery document / JWKS accepted (bytes). */
const MAX_DOC = 1024 * 1024;

/** The OIDC discovery fields keyhold uses. */
export interface Discovery {
  issuer: string;
  jwks_uri: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
}

/** A key resolver for jose: the candidates for a token's header. */
export type KeyResolver = (
  header: JWTHeaderParameters,
  token: FlattenedJWSInput,
) => Promise<KeyObject | Uint8Array | CryptoKey>;

function agentFor(url: string, caPem: string | undefined): HttpAgent | HttpsAgent | undefined {
  if (!caPem) return undefined;
  return url.startsWith('https:') ? new HttpsAgent({ ca: caPem, keepAlive: true }) : undefined;
}

/** GET a JSON document (bounded size and time); throws a plain Error with the reason. */
export function fetchJson(url: string, caPem?: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      reject(new Error(`invalid URL ${JSON.stringify(url)}`));
      return;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      reject(new Error(`unsupported URL scheme ${u.protocol}`));
      return;
    }
    const getter = u.protocol === 'https:' ? httpsGet : httpGet;
    const req = getter(
      u,
      {
        agent: agentFor(url, caPem) as HttpAgent | undefined,
        timeout: FETCH_TIMEOUT_MS,
        headers: { accept: 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_DOC) req.destroy(new Error('response too large'));
          else chunks.push(c);
        });
        res.on('end', () => {
          if ((res.statusCode ?? 0) >= 300) return reject(new Error(`unexpected status ${res.statusCode}`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(new Error('response is not JSON'));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
  });
}

/** Fetch and check an OIDC discovery document (the issuer must equal the discovery URL, as go-oidc checks). */
export async function discover(issuerUrl: string, caPem?: string): Promise<Discovery> {
  const base = issuerUrl.replace(/\/+$/, '');
  const doc = (await fetchJson(`${base}/.well-known/openid-configuration`, caPem)) as Partial<Discovery> | null;
  if (!doc || typeof doc !== 'object' || typeof doc.jwks_uri !== 'string' || typeof doc.issuer !== 'string')
    throw new Error('discovery document lacks issuer or jwks_uri');
  if (doc.issuer.replace(/\/+$/, '') !== base)
    throw new Error(
      `issuer did not match the issuer returned by provider, expected ${JSON.stringify(issuerUrl)} got ${JSON.stringify(doc.issuer)}`,
    );
  return doc as Discovery;
}

/** A resolver over a remote JWKS. */
export function remoteKeys(jwksUrl: string, caPem?: string): KeyResolver {
  const set = createRemoteJWKSet(new URL(jwksUrl), {
    cooldownDuration: JWKS_COOLDOWN_MS,
    cacheMaxAge: JWKS_MAX_AGE_MS,
    timeoutDuration: FETCH_TIMEOUT_MS,
    agent: agentFor(jwksUrl, caPem),
  });
  return set as unknown as KeyResolver;
}

/** Parse `jwt_validation_pubkeys` PEMs; 400 `error parsing public key: ...`. */
export function parsePublicKeys(pems: string[]): KeyObject[] {
  return pems.map((pem) => {
    try {
      const k = createPublicKey(pem);
      if (k.type !== 'public') throw new Error('not a public key');
      return k;
    } catch (e) {
      throw invalid(`error parsing public key: ${(e as Error).message}`);
    }
  });
}
