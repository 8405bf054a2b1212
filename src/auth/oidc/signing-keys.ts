/**
 * Signing keys of keyhold's OIDC issuer: generation per algorithm (node:crypto, asynchronous so RSA
 * generation never blocks the event loop), the public JWK that `.well-known/keys` publishes, and the
 * private key as PKCS#8 PEM for storage behind the barrier.
 */
import { createHash, createPrivateKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

/** Vault's identity token algorithms. */
export const OIDC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export type OidcAlgorithm = (typeof OIDC_ALGORITHMS)[number];

export function isOidcAlgorithm(v: string): v is OidcAlgorithm {
  return (OIDC_ALGORITHMS as readonly string[]).includes(v);
}

/** A public JWK as published (kid, alg and use added). */
export interface PublicJwk {
  kid: string;
  kty: string;
  alg: string;
  use: 'sig';
  [k: string]: unknown;
}

/** One generated key: its id, private PEM (stored) and public JWK (published). */
export interface SigningKey {
  kid: string;
  pem: string;
  jwk: PublicJwk;
}

/** Generate a signing key for `alg`. */
export async function generateSigningKey(alg: OidcAlgorithm): Promise<SigningKey> {
  let pair: { privateKey: KeyObject; publicKey: KeyObject };
  if (alg.startsWith('RS')) pair = await generate('rsa', { modulusLength: 2048 });
  else if (alg === 'EdDSA') pair = await generate('ed25519');
  else pair = await generate('ec', { namedCurve: alg === 'ES256' ? 'P-256' : alg === 'ES384' ? 'P-384' : 'P-521' });
  const pub = pair.publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  // The key id is a digest of the public key: stable, unique, and naming nothing.
  const kid = createHash('sha256').update(JSON.stringify(pub)).digest('base64url').slice(0, 32);
  const pem = pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  return { kid, pem, jwk: { ...pub, kid, alg, use: 'sig' } as PublicJwk };
}

/** The private KeyObject of a stored PEM. */
export function privateKeyOf(pem: string): KeyObject {
  return createPrivateKey(pem);
}
