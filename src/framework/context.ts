/** The request context handlers receive, and the environment engines are created with. */
import type { Storage } from '../storage/backend.js';
import type { KmsKey } from './kms-key.js';

/** Vault logical operations (method -> operation: GET read, LIST list, POST/PUT update, DELETE delete). */
export type Operation = 'create' | 'read' | 'update' | 'delete' | 'list' | 'patch';

/** A mount-table entry (sys/mounts). */
export interface MountInfo {
  /** Path with trailing slash, e.g. "transit/". */
  path: string;
  type: string;
  accessor: string;
  uuid: string;
  description: string;
  options: Record<string, string> | null;
  config: Record<string, unknown>;
  local: boolean;
  seal_wrap: boolean;
  external_entropy_access: boolean;
  created_at?: string;
  /** "auth" for auth methods (sys/auth; `path` is then `auth/<name>/`), absent for secrets engines. */
  table?: 'auth';
}

/** One alias of an identity entity (one per auth mount the entity logged in through). */
export interface TokenIdentityAlias {
  /** Accessor of the auth mount the alias belongs to (e.g. "auth_jwt_1a2b3c4d"). */
  mountAccessor: string;
  /** Alias name (the user claim, role id, ...). */
  name: string;
  metadata: Record<string, string>;
  /** Alias id ({{identity.entity.aliases.<accessor>.id}}), when known. */
  id?: string;
  /** Alias custom metadata ({{identity.entity.aliases.<accessor>.custom_metadata.K}}), when known. */
  customMetadata?: Record<string, string>;
}

/**
 * The identity behind a token, as Vault's ACL templating sees it ({{identity.entity.*}},
 * {{identity.groups.*}}; vault/sdk/helper/identitytpl). The identity store fills it; the ACL only reads it.
 */
export interface TokenIdentity {
  entityId: string;
  entityName: string;
  entityMetadata: Record<string, string>;
  aliases: TokenIdentityAlias[];
  /** Ids of the entity's groups; `groupNames[i]` is the name of `groupIds[i]`. */
  groupIds?: string[];
  groupNames?: string[];
  /** Group metadata by group id ({{identity.groups.ids.<id>.metadata.K}}), when known. */
  groupMetadata?: Record<string, Record<string, string>>;
  /** Identity policies: the entity's and its groups' (direct and inherited), added to the token's own. */
  policies?: string[];
  /** The entity is disabled: its tokens are refused (not revoked), as in Vault. */
  disabled?: boolean;
}

/** The token a request carries, after lookup. */
export interface TokenInfo {
  id: string;
  accessor: string;
  policies: string[];
  /** Root tokens bypass the ACL. */
  root: boolean;
  displayName: string;
  meta?: Record<string, string>;
  /** Identity entity of a login-issued token ("" or absent for none). */
  entityId?: string;
  /** Source CIDRs the token may be used from (token_bound_cidrs); absent = anywhere. */
  boundCidrs?: string[];
  /** A batch token (not stored: no accessor, cubbyhole, renewal or revocation). */
  batch?: boolean;
  /** This request spends the token's last use (num_uses); the core revokes it afterwards. */
  lastUse?: boolean;
  /** On a cluster standby: the token has a use limit, so the request must go to the active (which counts uses). */
  mustForward?: boolean;
  /** Entity of the token (for templated policies); absent when the token has none. */
  identity?: TokenIdentity;
}

/** Minimal structured logger; never pass secrets. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Time source (injectable for tests). */
export interface Clock {
  now(): number;
}

/** A KV change event (secret sync subscribes). `kind` follows Vault's `kv-v2/<op>` names without the prefix. */
export interface KvEvent {
  kind:
    | 'data-write'
    | 'data-patch'
    | 'data-delete'
    | 'delete'
    | 'undelete'
    | 'destroy'
    | 'metadata-write'
    | 'metadata-patch'
    | 'metadata-delete';
  mountAccessor: string;
  mountPath: string;
  /** Secret path within the mount (no leading slash). */
  path: string;
  /** Version affected (current version for metadata events; 0 when none). */
  version: number;
  /** Versions named by delete/undelete/destroy. */
  versions?: number[];
  /** Current version of the secret after the change (0 when the secret no longer exists). */
  currentVersion: number;
}

/** In-process events between engines (KV -> sync). */
export interface EventBus {
  emit(topic: 'kv', event: KvEvent): void;
  on(topic: 'kv', listener: (event: KvEvent) => void): () => void;
}

/**
 * What an auth method hands the token store after a successful login (Vault's logical.Auth): the
 * token store applies the TTL rules, creates the token and the identity entity/alias, and answers
 * the `auth` block. Field meanings follow Vault's sdk/helper/tokenutil.
 */
export interface LoginAuth {
  /** Creation path, e.g. "auth/approle/login". */
  path: string;
  /** Display name suffix after the mount ("" for approle, the user claim value for jwt). */
  displayName: string;
  policies: string[];
  noDefaultPolicy: boolean;
  /** String-only token metadata (Go clients decode map[string]string). */
  metadata: Record<string, string>;
  /** The entity alias this login authenticates as. */
  alias: { name: string; metadata?: Record<string, string> };
  /** Group alias names (jwt groups_claim); recorded on the entity's metadata only. */
  groupAliases?: string[];
  /** Seconds; 0 = unset (mount/system default). */
  ttl: number;
  maxTtl: number;
  period: number;
  explicitMaxTtl: number;
  numUses: number;
  boundCidrs: string[];
  /** "service", "batch", "default" (mount decides). */
  tokenType: string;
  /** Role name shown in token lookups (approle/jwt role). */
  role?: string;
}

/** The `auth` block of a login plus the warnings the TTL rules produced. */
export interface IssuedLogin {
  auth: Record<string, unknown>;
  warnings: string[];
}

/**
 * sys/managed-keys as engines use them (transit's managed_key type). Implemented by
 * kms/managed-keys.ts (ManagedKeyRegistry); declared here so engines reach it without the framework
 * importing the key providers.
 */
export interface ManagedKeys {
  /** The managed key named or id'd by a request, as `mount` may use it (400 when missing or not allowed). */
  resolve(ref: { name?: string; id?: string }, mount: MountInfo): Promise<{ uuid: string }>;
  /** The live key behind a UUID for one usage, checked against `mount`'s permission on every call. */
  keyFor(uuid: string, mount: MountInfo, usage?: 'sign' | 'verify' | 'encrypt' | 'decrypt'): Promise<KmsKey>;
  /** The managed key with this UUID, or null when it no longer exists. */
  byUuid(uuid: string): Promise<{ name: string } | null>;
  /** Record / forget that key `keyName` of `mount` uses the managed key (its delete is refused meanwhile). */
  markUsed(uuid: string, mount: MountInfo, keyName: string): Promise<void>;
  unmarkUsed(uuid: string, mount: MountInfo, keyName: string): Promise<void>;
}

/** What the core offers engines (mount lookup for sync, KV reads). */
export interface CoreServices {
  /** Issue a token for a successful login on `mount` (auth methods only). */
  issueLoginToken?(mount: MountInfo, login: LoginAuth): Promise<IssuedLogin>;
  /** Mount by path ("secret/" or "secret") or by accessor. */
  findMount(pathOrAccessor: string): MountInfo | undefined;
  /** The live engine instance of a mount (typed by the caller). */
  engineOf<T>(mountPath: string): T | undefined;
  mounts(): MountInfo[];
  /** Managed keys (sys/managed-keys), for transit's managed_key type. */
  readonly managedKeys?: ManagedKeys;
  /** The server's `api_addr` (the identity token issuer's default base), when configured. */
  readonly apiAddr?: string;
}

/** What an engine instance is created with. */
export interface EngineEnv {
  /** Plaintext storage scoped to this mount (behind the barrier). */
  storage: Storage;
  mount: MountInfo;
  clock: Clock;
  logger: Logger;
  events: EventBus;
  core: CoreServices;
  /**
   * True on a cluster standby: the instance serves reads and crypto but runs no background work
   * (auto-rotation, sync worker); the core recreates instances when the node's role changes.
   */
  standby?: boolean;
}

/** Lifecycle an engine instance may implement. */
export interface EngineLifecycle {
  /** Stop timers, flush work. */
  close?(): Promise<void>;
  /**
   * Another daemon changed the record at `key` (relative to this mount's storage) in shared storage
   * (an HA backend with `watch`): drop any cached copy. Engines without caches need not implement it.
   */
  invalidate?(key: string): void | Promise<void>;
}

/** A certificate the TLS peer presented (node:tls's detailed peer certificate, as much as is read). */
export interface PeerCertificate {
  raw?: Buffer;
  issuerCertificate?: PeerCertificate;
}

/** The TLS side of a connection (node:tls TLSSocket). */
export interface TlsPeer {
  getPeerCertificate(detailed: true): PeerCertificate | null;
}

/** The request context handlers receive. */
export interface RequestContext<E, D> {
  engine: E;
  data: D;
  /** Raw (uncoerced) request data, e.g. for batch items. */
  raw: Record<string, unknown>;
  operation: Operation;
  /** Path within the mount, without leading or trailing slash. */
  path: string;
  /** Full logical path (mount path + path), e.g. "transit/encrypt/k". */
  fullPath: string;
  params: Record<string, string>;
  mount: MountInfo;
  token: TokenInfo | null;
  requestId: string;
  remoteAddress: string;
  headers: Record<string, string | string[] | undefined>;
  /** The request body as received (snapshot restore reads a binary body). */
  body?: Buffer;
  /** The TLS connection the request came on, when it did (the cert auth method reads the client's certificates). */
  tls?: TlsPeer;
  /** ACL check for another path (e.g. encrypt's batch upsert decisions). */
  allowed(capability: string, fullPath: string): boolean;
}
