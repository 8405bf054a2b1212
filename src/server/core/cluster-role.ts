/**
 * The node's HA role as the core sees it: standby or active (sealed is the seal's), the switch
 * between them (engine instances are recreated so background work runs on the active only, design
 * note section 6), and what sys/leader, sys/health, sys/ha-status and sys/step-down answer.
 */
import type { HaStatus, SysCluster } from '../../engines/sys/sys-parts.js';
import type { RoleView, SealView } from '../contracts.js';
import { haStatusOf } from '../cluster.js';
import type { ClusterRouting } from '../forward.js';
import type { Access } from './access.js';

/** What the role is built from. */
export interface ClusterRoleDeps {
  seal: SealView;
  /** Token expiry runs on the node that writes (core/access.ts). */
  access: Pick<Access, 'startTokenExpiry' | 'stopTokenExpiry'>;
  /** Drop every cache and recreate every engine instance (core/invalidation.ts). */
  reloadAll(): Promise<void>;
}

/** This node's role in a cluster (a single node is always active once unsealed). */
export class ClusterRole implements RoleView, SysCluster {
  /** Set on a cluster node (HA storage): the router's forwarding decisions. */
  routing?: ClusterRouting;
  private standbyMode: boolean;

  constructor(
    private readonly deps: ClusterRoleDeps,
    standby: boolean,
  ) {
    this.standbyMode = standby;
  }

  /** True while this node is a cluster standby (serves reads and crypto, forwards writes). */
  isStandby(): boolean {
    return this.standbyMode;
  }

  /**
   * Switch between active and standby: engine instances are recreated so background work (auto-rotation,
   * sync worker) runs exactly when the node is active (design note §6: workers follow the role).
   */
  async setStandby(standby: boolean): Promise<void> {
    if (this.standbyMode === standby) return;
    this.standbyMode = standby;
    if (standby) this.deps.access.stopTokenExpiry();
    else if (!this.deps.seal.isSealed()) this.deps.access.startTokenExpiry();
    await this.deps.reloadAll();
  }

  /** This node's HA status (sys/leader, sys/health). */
  haStatus(): HaStatus {
    return haStatusOf(this.routing?.cluster ?? null, this.deps.seal);
  }

  /** Cluster nodes for sys/ha-status (none without HA). */
  async haNodes(): Promise<Array<Record<string, unknown>>> {
    return this.routing ? this.routing.cluster.nodes() : [];
  }

  /** sys/step-down: the active gives up the lock (a no-op without HA). */
  async stepDown(): Promise<void> {
    await this.routing?.cluster.stepDown();
  }
}
