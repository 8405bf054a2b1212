/**
 * The identity of a token as templated policies read it (Vault's `identity.entity.*` template
 * parameters, vault/identity_store_util.go / sdk/helper/identitytpl). The policy engineer's branch
 * defines the same shape; the lead reconciles the two.
 */

/** One alias of an entity: who the entity is to one auth mount. */
export interface TokenIdentityAlias {
  id: string;
  /** Accessor of the auth mount (`auth_jwt_1a2b3c4d`). */
  mountAccessor: string;
  mountPath: string;
  mountType: string;
  /** Alias name: the AppRole role_id, the JWT user claim value. */
  name: string;
  metadata: Record<string, string>;
}

/** The entity behind a login-issued token. */
export interface TokenIdentity {
  entity: { id: string; name: string; metadata: Record<string, string> };
  aliases: TokenIdentityAlias[];
  /** Group names from the method (jwt `groups_claim`); keyhold has no identity groups yet. */
  groups: string[];
}
