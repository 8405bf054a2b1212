/**
 * Interfaces shared by the core's parts (server/core/) and the cluster node that plugs into them:
 * what one part reads of another. Parts depend on these small views, never
 * on each other's classes in a circle.
 */
import type { Logger } from '../framework/context.js';
import type { EngineModule } from '../framework/engine.js';
import type { LifecycleEvents } from '../framework/events.js';
import type { Storage } from '../storage/backend.js';

/** Whether the barrier is open (core/seal-state.ts). */
export interface SealView {
  isSealed(): boolean;
}

/** The node's HA role as the other parts read it (core/cluster-role.ts). */
export interface RoleView {
  /** True while this node is a cluster standby (serves reads and crypto, forwards writes). */
  isStandby(): boolean;
}

/** Dropping what this daemon cached of records another daemon changed (core/invalidation.ts). */
export interface Invalidator {
  /** The record at `key` (a barrier path) changed; '' = changes may have been missed. */
  invalidate(key: string): Promise<void>;
  /** Drop every cache and recreate every engine instance (role change, or changes possibly missed). */
  reloadAll(): Promise<void>;
}

/**
 * The modules of the internal mounts (core/mount-table.ts mounts them at every unseal). sys and token
 * are the core's parts (engines/sys/with-parts.ts); identity serves the core's identity store (and
 * issues identity tokens); cubbyhole finds a token's directory.
 */
export interface InternalModules {
  sys: EngineModule;
  /** The sys engine's instance, also serving seal-status, unseal, init and health while sealed. */
  sysParts: unknown;
  token: EngineModule;
  identity: EngineModule;
  cubbyhole: EngineModule;
  /** Login MFA: identity/mfa/ and sys/mfa/ (the longer paths win over identity/ and sys/). */
  mfa?: { identity: EngineModule; sys: EngineModule };
}

/** What a cluster node (server/cluster.ts) needs of the core it runs in. */
export interface ClusterHost extends SealView, RoleView {
  readonly logger: Logger;
  readonly version: string;
  /** The barrier: the leader advertisement and the index key live behind it. */
  readonly barrier: Storage;
  readonly sealConfig: { storage_id: string } | null;
  /** Lifecycle events: the node starts after unseal, stops before seal, takes the lock before init. */
  readonly events: LifecycleEvents;
  /** Switch between active and standby (engine instances are recreated). */
  setStandby(standby: boolean): Promise<void>;
}
