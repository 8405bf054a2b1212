/**
 * Token roles (`auth/token/roles/:role_name`, hashicorp/vault vault/token_store.go tsRoleEntry):
 * what a token created through `auth/token/create/:role_name` may carry.
 */
import { getJSON, putJSON, type Storage } from '../storage/backend.js';

/** A stored token role. */
export interface TokenRole {
  name: string;
  allowed_policies: string[];
  disallowed_policies: string[];
  allowed_policies_glob: string[];
  disallowed_policies_glob: string[];
  allowed_entity_aliases: string[];
  orphan: boolean;
  renewable: boolean;
  path_suffix: string;
  token_period: number;
  token_explicit_max_ttl: number;
  token_bound_cidrs: string[];
  token_no_default_policy: boolean;
  token_num_uses: number;
  token_type: string;
}

/** A new role's defaults. */
export function defaultTokenRole(name: string): TokenRole {
  return {
    name,
    allowed_policies: [],
    disallowed_policies: [],
    allowed_policies_glob: [],
    disallowed_policies_glob: [],
    allowed_entity_aliases: [],
    orphan: false,
    renewable: true,
    path_suffix: '',
    token_period: 0,
    token_explicit_max_ttl: 0,
    token_bound_cidrs: [],
    token_no_default_policy: false,
    token_num_uses: 0,
    token_type: 'default-service',
  };
}

/** Token roles behind the barrier. */
export class TokenRoleStore {
  constructor(private readonly storage: Storage) {}

  /** A role or null. */
  async get(name: string): Promise<TokenRole | null> {
    return getJSON<TokenRole>(this.storage, `role/${name}`);
  }
  /** Store a role. */
  async put(role: TokenRole): Promise<void> {
    await putJSON(this.storage, `role/${role.name}`, role);
  }
  /** Delete a role. */
  async delete(name: string): Promise<void> {
    await this.storage.delete(`role/${name}`);
  }
  /** Role names. */
  async list(): Promise<string[]> {
    return (await this.storage.list('role/')).filter((n) => !n.endsWith('/')).sort();
  }
}
