/** The request context handlers receive, and the environment engines are created with. */
import type { Storage } from '../storage/backend.js';
import type { Operation } from './route.js';

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
  /** This request spends the token's last use (num_uses); the core revokes it afterwards. */
  lastUse?: boolean;
  /** On a cluster standby: the token has a use limit, so the request must go to the active (which counts uses). */
  mustForward?: boolean;
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

/** What the core offers engines (mount lookup for sync, KV reads). */
export interface CoreServices {
  /** Mount by path ("secret/" or "secret") or by accessor. */
  findMount(pathOrAccessor: string): MountInfo | undefined;
  /** The live engine instance of a mount (typed by the caller). */
  engineOf<T>(mountPath: string): T | undefined;
  mounts(): MountInfo[];
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
  /** ACL check for another path (e.g. encrypt's batch upsert decisions). */
  allowed(capability: string, fullPath: string): boolean;
}
