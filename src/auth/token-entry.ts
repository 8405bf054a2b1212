/**
 * What a token is: the stored entry (never the token itself), the options it is created with, and
 * the request-facing view the router hands to handlers. The token store (tokens.ts) owns their life.
 */
import type { TokenInfo } from '../framework/context.js';

/** A stored token entry (never holds the token itself). */
export interface TokenEntry {
  hash: string;
  accessor: string;
  policies: string[];
  display_name: string;
  meta: Record<string, string>;
  /** Unix seconds (millisecond precision). */
  creation_time: number;
  /** Seconds; 0 = no expiry. */
  ttl: number;
  explicit_max_ttl: number;
  /** Unix seconds (millisecond precision); 0 = never. */
  expire_time: number;
  renewable: boolean;
  /** 0 = unlimited; otherwise uses left. */
  num_uses: number;
  orphan: boolean;
  parent_accessor: string;
  type: 'service' | 'batch';
  /** Creation path ("auth/token/create", "auth/approle/login"). Absent on entries written before issue 14. */
  path?: string;
  /** Identity entity of a login-issued token. */
  entity_id?: string;
  /** Periodic token: every renewal sets the TTL to this (seconds). */
  period?: number;
  /** Token role (auth/token/roles) or auth-method role name. */
  role?: string;
  /** Accessor of the auth mount that issued it (disabling the mount revokes it). */
  mount_accessor?: string;
  /** Effective max TTL of a non-periodic token, from creation (mount/role max); 0 = none. */
  max_ttl?: number;
  /** Source CIDRs the token may be used from (token_bound_cidrs). */
  bound_cidrs?: string[];
  /** Unix seconds of the last renewal. */
  last_renewal_time?: number;
  /** The last of `num_uses` is in use; revoked when that request ends. */
  spent?: boolean;
}

/** Options of token creation (the origin fields are stored on the entry as given). */
export interface CreateTokenOptions
  extends Pick<TokenEntry, 'path' | 'entity_id' | 'period' | 'role' | 'mount_accessor' | 'max_ttl' | 'bound_cidrs'> {
  policies: string[];
  ttl?: number;
  explicit_max_ttl?: number;
  renewable?: boolean;
  num_uses?: number;
  display_name?: string;
  meta?: Record<string, string>;
  orphan?: boolean;
  parent_accessor?: string;
  /** Use this exact token id (dev root token). */
  id?: string;
  /** "batch": not stored; the token carries its sealed entry (default "service"). */
  type?: 'service' | 'batch';
}

/** The request-facing view of a token entry. */
export function tokenInfo(id: string, e: TokenEntry): TokenInfo {
  const info: TokenInfo = {
    id,
    accessor: e.accessor,
    policies: e.policies,
    root: e.policies.includes('root'),
    displayName: e.display_name,
    meta: e.meta,
  };
  if (e.entity_id) info.entityId = e.entity_id;
  if (e.bound_cidrs?.length) info.boundCidrs = e.bound_cidrs;
  if (e.type === 'batch') info.batch = true;
  return info;
}
