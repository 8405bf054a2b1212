/**
 * Workload identity federation fields shared by provider-a-sm, provider-b-kv and provider-c-sm
 * (Vault 2.x: `identity_token_audience`, `identity_token_ttl`, `identity_token_key`): the
 * destination's connector signs a short-lived identity token with keyhold's OIDC issuer
 * (../identity-token.ts) and trades it for cloud credentials; no static key is stored.
 */
import { f } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import { SyncFailure } from '../failure.js';
import {
  DEFAULT_IDENTITY_TOKEN_KEY,
  DEFAULT_IDENTITY_TOKEN_TTL,
  identitySubject,
  type IdentityTokenSigner,
} from '../identity-token.js';
import type { DestinationRecord } from '../types.js';
import type { ConnectorDeps } from './common.js';

/** The federation fields. */
export const FEDERATION_FIELDS = {
  identity_token_audience: f.string(
    'Audience (`aud`) of the identity tokens keyhold signs for this destination; setting it turns federation on (no static keys)',
  ),
  identity_token_ttl: f.duration('Lifetime of each identity token (seconds or a duration such as "10m"; default 1h)'),
  identity_token_key: f.string(
    'identity/oidc/key that signs the identity tokens (default "default", made on first use)',
  ),
};

/** Their values when a create omits them. */
export const FEDERATION_DEFAULTS = {
  identity_token_audience: '',
  identity_token_ttl: DEFAULT_IDENTITY_TOKEN_TTL,
  identity_token_key: '',
};

/** Whether a connection uses federation. */
export function federated(conn: Record<string, unknown>): boolean {
  return typeof conn.identity_token_audience === 'string' && conn.identity_token_audience !== '';
}

/** Check the federation fields (400 naming the field). */
export function checkFederationFields(conn: Record<string, unknown>): void {
  const ttl = conn.identity_token_ttl;
  if (ttl !== undefined && (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 60 || ttl > 86_400))
    throw invalid('identity_token_ttl', 'must be from 60 seconds to 24 hours');
  const key = conn.identity_token_key;
  if (key !== undefined && key !== '' && !/^[A-Za-z0-9_.-]{1,128}$/.test(String(key)))
    throw invalid('identity_token_key', 'must name an identity/oidc/key (letters, digits, "_", "." and "-")');
  const aud = conn.identity_token_audience;
  if (aud !== undefined && (typeof aud !== 'string' || aud.length > 512))
    throw invalid('identity_token_audience', 'must be a string of at most 512 characters');
}

/** What a connector needs to sign its destination's identity tokens. */
export interface FederationParams {
  signer: IdentityTokenSigner;
  audience: string;
  subject: string;
  ttlSeconds: number;
  keyName: string;
}

/** The signing parameters of a federated destination (throws INTERNAL_VAULT_ERROR without an issuer). */
export function federationOf(dest: DestinationRecord, deps: ConnectorDeps): FederationParams {
  const c = dest.connection;
  if (!deps.identityToken)
    throw new SyncFailure('INTERNAL_VAULT_ERROR', 'identity token: no OIDC issuer available to sign with');
  return {
    signer: deps.identityToken,
    audience: String(c.identity_token_audience),
    subject: identitySubject(dest.type, dest.name),
    ttlSeconds: Number(c.identity_token_ttl) || DEFAULT_IDENTITY_TOKEN_TTL,
    keyName: String(c.identity_token_key || DEFAULT_IDENTITY_TOKEN_KEY),
  };
}

/** Sign one identity token of a federated destination. */
export function signFor(p: FederationParams): Promise<string> {
  return p.signer.sign({ sub: p.subject, aud: p.audience }, p.ttlSeconds, p.keyName);
}
