/**
 * Identity tokens for workload identity federation (issue 31 parts 2 and 3): a short-lived JWT
 * signed with one of keyhold's OIDC issuer keys (identity/oidc/key/:name), verifiable by anyone with
 * the issuer's JWKS (GET /v1/identity/oidc/.well-known/keys), exchanged by the connectors for cloud
 * credentials (AWS AssumeRoleWithWebIdentity, an Azure client assertion, Google's STS).
 *
 * sync may not import auth/ (layering), so the issuer is reached through the identity mount's engine
 * instance with the structural type below; `IdentityTokenSigner` is what connectors see.
 *
 * Claims: `iss` keyhold's issuer, `aud` the destination's `identity_token_audience`, `sub`
 * `keyhold:secret-sync:<type>:<name>` (the neutral type id, so the subject is the same under Vault's
 * alias and stable for the destination's life), `iat`/`nbf` now, `exp` now + `identity_token_ttl`.
 */
import { createPrivateKey, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { SyncFailure } from './failure.js';

/** Signs identity tokens of a destination. */
export interface IdentityTokenSigner {
  /** A JWT for `sub`/`aud`, signed with the issuer key `keyName`, living `ttlSeconds`. */
  sign(claims: { sub: string; aud: string }, ttlSeconds: number, keyName: string): Promise<string>;
  /** The issuer URL (`iss`). */
  issuer(): Promise<string>;
}

/** What sync needs of keyhold's OIDC issuer (auth/oidc/issuer.ts `OidcIssuer`, structurally). */
export interface OidcIssuerLike {
  key(name: string): Promise<{ algorithm: string; current: { kid: string; pem: string } } | null>;
  putKey(name: string, opts: { allowed_client_ids?: string[] }): Promise<void>;
  issuer(): Promise<string>;
}

/** The key Vault's plugin identity tokens use when none is named. */
export const DEFAULT_IDENTITY_TOKEN_KEY = 'default';
/** Vault's default `identity_token_ttl` (one hour). */
export const DEFAULT_IDENTITY_TOKEN_TTL = 3600;

/** The stable subject of a destination's identity tokens. */
export function identitySubject(type: string, name: string): string {
  return `keyhold:secret-sync:${type}:${name}`;
}

/** A signer over the issuer `lookup` finds (null while the identity mount is not there). */
export function identityTokenSigner(lookup: () => OidcIssuerLike | null, now: () => number): IdentityTokenSigner {
  const keys = new Map<string, KeyObject>();
  const issuerOf = (): OidcIssuerLike => {
    const oidc = lookup();
    if (!oidc)
      throw new SyncFailure(
        'INTERNAL_VAULT_ERROR',
        'identity token: the OIDC issuer (identity/ mount) is not available',
      );
    return oidc;
  };
  return {
    issuer: () => issuerOf().issuer(),
    async sign(claims, ttlSeconds, keyName) {
      const oidc = issuerOf();
      let key = await oidc.key(keyName);
      // As Vault: the "default" key is made on first use.
      if (!key && keyName === DEFAULT_IDENTITY_TOKEN_KEY) {
        await oidc.putKey(DEFAULT_IDENTITY_TOKEN_KEY, { allowed_client_ids: ['*'] });
        key = await oidc.key(keyName);
      }
      if (!key)
        throw new SyncFailure(
          'CLIENT_SIDE_ERROR',
          `identity token: no identity/oidc/key named "${keyName.slice(0, 64)}" (identity_token_key)`,
        );
      let priv = keys.get(key.current.kid);
      if (!priv) {
        if (keys.size > 16) keys.clear();
        priv = createPrivateKey(key.current.pem);
        keys.set(key.current.kid, priv);
      }
      const t = Math.floor(now() / 1000);
      return new SignJWT({ jti: randomUUID() })
        .setProtectedHeader({ alg: key.algorithm, kid: key.current.kid, typ: 'JWT' })
        .setIssuer(await oidc.issuer())
        .setSubject(claims.sub)
        .setAudience(claims.aud)
        .setIssuedAt(t)
        .setNotBefore(t)
        .setExpirationTime(t + ttlSeconds)
        .sign(priv);
    },
  };
}
