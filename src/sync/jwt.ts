/** RS256 JSON Web Tokens (RFC 7515/7519) for the Google service-account token exchange. */
import { createPrivateKey, sign } from 'node:crypto';

/** Sign `claims` with an RSA private key (PEM, PKCS#8 or PKCS#1) as a compact RS256 JWT. */
export function signJwtRs256(claims: Record<string, unknown>, privateKeyPem: string, kid?: string): string {
  const header: Record<string, string> = { alg: 'RS256', typ: 'JWT' };
  if (kid) header.kid = kid;
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o), 'utf8').toString('base64url');
  const input = `${enc(header)}.${enc(claims)}`;
  const key = createPrivateKey(privateKeyPem);
  const sig = sign('sha256', Buffer.from(input, 'ascii'), key);
  return `${input}.${sig.toString('base64url')}`;
}
