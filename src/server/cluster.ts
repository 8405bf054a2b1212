/**
 * A node of a keyhold cluster on shared PostgreSQL storage (issue 13; shared/reference/cluster-wire.md §2).
 *
 * The node's role is a value: `sealed`, `standby` or `active` (design note §6). Exactly one unsealed
 * node holds the HA lock and is active; the others are standbys that serve reads and crypto from
 * their caches (kept fresh by the backend's change feed) and forward writes to the active's
 * `api_addr`. Engine instances are recreated on every role change, so background work (auto-rotation,
 * the sync worker) runs on the active only.
 *
 * Timings follow Vault's PostgreSQL HA (lock TTL 15 s, renew every third of it) with two changes:
 * standbys poll every 500 ms (Vault: 1 s), and a lock whose holder's database session has ended
 * (a killed process) is free at once, so a killed active is replaced in about a second, while a
 * paused or partitioned one is replaced when its TTL runs out.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type { Logger } from '../framework/context.js';
import { getJSON, putJSON } from '../storage/backend.js';
import type { PostgresBackend } from '../storage/postgres.js';
import type { ClusterHost, SealView } from './contracts.js';
import type { HaStatus } from '../engines/sys/sys-parts.js';
import { ForwardSignature } from './forward-signature.js';

/** A node's role. */
export type Role = 'sealed' | 'standby' | 'active';

/** The active node's advertisement (`core/leader/<node id>`, behind the barrier as in Vault). */
interface Advertisement {
  api_addr: string;
  cluster_addr: string;
  active_time: string;
  node_id: string;
}

/** Cluster settings from the config. */
export interface ClusterOptions {
  apiAddr: string;
  clusterAddr?: string;
  clusterName?: string;
  disableStandbyReads: boolean;
  /** Wait after a manual step-down before competing again (Vault: 10 s). */
  stepDownWaitMs?: number;
  /** Standby poll interval (ms). */
  pollMs?: number;
  /** Node-local file remembering which cluster (storage id) this node joined. */
  identityFile?: string;
}

/** Record the cluster this node serves (first unseal), so it never starts on another cluster's table. */
function rememberCluster(file: string, storageId: string, database: string): void {
  if (!storageId || existsSync(file)) return;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify({ storage_id: storageId, database }) + '\n', { mode: 0o600 });
  } catch {
    /* best effort: the check at start is then skipped */
  }
}

/**
 * Refuse to start on a table that holds another cluster's data: a node that served cluster A (its
 * storage id recorded at first unseal) pointed at cluster B's table would hold B's data under keys
 * it cannot open, and its keychain or recovery key would not match. Returns the reason, or null.
 */
export function otherClusterReason(file: string, storageId: string | undefined, database: string): string | null {
  if (!storageId || !existsSync(file)) return null;
  let known: { storage_id?: string; database?: string };
  try {
    known = JSON.parse(readFileSync(file, 'utf8')) as { storage_id?: string };
  } catch {
    return null;
  }
  if (!known.storage_id || known.storage_id === storageId) return null;
  return (
    `this node belongs to the cluster with storage id ${known.storage_id} (first served from ${known.database ?? '?'}), ` +
    `but ${database} holds another cluster's data (storage id ${storageId}, different barrier keys); ` +
    `point storage at this node's own table, or remove ${file} to make this node join the other cluster`
  );
}

const INDEX_KEY = 'core/index-header-hmac-key';

/** The cluster state of this node. */
export class Cluster {
  role: Role = 'sealed';
  activeSince: Date | null = null;
  /** The active node as last seen (a standby's forwarding target). */
  leader: Advertisement | null = null;
  private leaderEpoch = 0;
  private timer: NodeJS.Timeout | null = null;
  private echoTimer: NodeJS.Timeout | null = null;
  private running = false;
  private tick: Promise<void> | null = null;
  private notBefore = 0;
  private indexKey: Buffer | null = null;
  /** The forwarding key (`core/forwarding-hmac-key`): standbys sign forwarded requests, the active checks them. */
  readonly signature: ForwardSignature;
  readonly pollMs: number;
  readonly renewMs: number;
  readonly logger: Logger;

  constructor(
    readonly core: ClusterHost,
    readonly backend: PostgresBackend,
    readonly opts: ClusterOptions,
  ) {
    this.logger = core.logger;
    this.signature = new ForwardSignature(core.barrier);
    this.pollMs = opts.pollMs ?? Math.min(500, Math.max(100, Math.floor(backend.lockTtlMs / 10)));
    this.renewMs = Math.max(200, Math.floor(backend.lockTtlMs / 3));
    core.events.on('after-unseal', () => this.start());
    core.events.on('before-seal', () => this.stop());
    // Init writes (seal config, keyring, root token): only the lock holder may write.
    core.events.on('before-init', async () => {
      if (await this.backend.tryLock(this.backend.nodeId)) return;
      throw new Error('another node of this cluster holds the lock: initialise through it');
    });
  }

  /** The node id (the lock's ha_value and the advertisement's key). */
  get nodeId(): string {
    return this.backend.nodeId;
  }

  /** Unsealed: compete for the lock; serve as standby meanwhile. */
  private async start(): Promise<void> {
    this.running = true;
    if (this.opts.identityFile) rememberCluster(this.opts.identityFile, this.clusterId(), this.backend.describe());
    this.role = 'standby';
    await this.loadIndexKey().catch(() => {});
    await this.signature.loadKey().catch(() => null);
    await this.step();
    this.schedule();
    this.echoTimer = setInterval(() => void this.echo(), 2000);
    this.echoTimer.unref();
    void this.echo();
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = setTimeout(
      () => {
        this.tick = this.step()
          .catch((e: unknown) => this.logger.warn('cluster: HA step failed', { error: (e as Error)?.message }))
          .finally(() => {
            this.tick = null;
            this.schedule();
          });
      },
      this.role === 'active' ? this.renewMs : this.pollMs,
    );
    this.timer.unref();
  }

  /** One HA step: the active renews (or steps down), a standby tries to take the lock. */
  private async step(): Promise<void> {
    if (!this.running) return;
    if (this.role === 'active') {
      if (await this.backend.renewLock()) return;
      this.logger.warn('cluster: lock renewal failed; stepping down');
      await this.becomeStandby();
      return;
    }
    if (Date.now() >= this.notBefore) {
      // Held from init (tryLock on before-init) or won now.
      const epoch = (await this.backend.renewLock()) ? this.leaderEpoch || 1 : await this.backend.tryLock(this.nodeId);
      if (epoch) {
        await this.becomeActive(epoch);
        return;
      }
    }
    await this.refreshLeader();
  }

  private async becomeActive(epoch: number): Promise<void> {
    this.logger.info('cluster: acquired the lock; becoming active', { epoch });
    try {
      await this.core.setStandby(false);
      if (!this.indexKey) await this.ensureIndexKey();
      // Before advertising: a standby forwarding a cert login right after the first active took over
      // must find the key (without it the active takes no client certificate: a 403). A node that
      // was a standby loaded the key when it started, so a failover does no I/O here.
      await this.signature
        .ensureKey()
        .catch((e: unknown) =>
          this.logger.warn('cluster: cannot create the forwarding key', { error: (e as Error)?.message }),
        );
      const now = new Date();
      const ad: Advertisement = {
        api_addr: this.opts.apiAddr,
        cluster_addr: this.opts.clusterAddr ?? '',
        active_time: now.toISOString(),
        node_id: this.nodeId,
      };
      await putJSON(this.core.barrier, `core/leader/${this.nodeId}`, ad);
      this.leader = ad;
      this.leaderEpoch = epoch;
      this.activeSince = now;
      this.role = 'active';
      void this.cleanOldAdvertisements();
    } catch (e) {
      this.logger.error('cluster: becoming active failed; stepping down', { error: (e as Error)?.message });
      await this.becomeStandby();
    }
  }

  private async becomeStandby(waitMs = 0): Promise<void> {
    const was = this.role;
    this.role = 'standby';
    this.activeSince = null;
    this.leader = null;
    this.notBefore = Date.now() + waitMs;
    await this.backend.releaseLock();
    if (was === 'active' || !this.core.isStandby()) await this.core.setStandby(true);
    await this.refreshLeader().catch(() => {});
  }

  /** `sys/step-down`: give the lock up and stay out of the race for a while (Vault: 10 s). */
  async stepDown(): Promise<void> {
    if (this.role !== 'active') return;
    this.logger.info('cluster: stepping down on request');
    await this.becomeStandby(this.opts.stepDownWaitMs ?? 10_000);
  }

  /** Look the active node up again (lock holder, then its advertisement). */
  async refreshLeader(): Promise<void> {
    const holder = await this.backend.lockHolder();
    if (!holder) {
      this.leader = null;
      return;
    }
    if (this.leader && this.leader.node_id === holder.value && this.leaderEpoch === holder.epoch) return;
    const ad = await getJSON<Advertisement>(this.core.barrier, `core/leader/${holder.value}`);
    this.leader = ad && ad.node_id === holder.value ? ad : null;
    this.leaderEpoch = holder.epoch;
  }

  private async cleanOldAdvertisements(): Promise<void> {
    try {
      for (const id of await this.core.barrier.list('core/leader/')) {
        if (id !== this.nodeId && this.role === 'active') await this.core.barrier.delete(`core/leader/${id}`);
      }
    } catch {
      /* next time */
    }
  }

  private async echo(): Promise<void> {
    if (!this.running) return;
    try {
      await this.backend.echo(this.nodeId, {
        hostname: hostname(),
        api_address: this.opts.apiAddr,
        cluster_address: this.opts.clusterAddr ?? '',
        version: this.core.version,
      });
    } catch {
      /* the database is down: the next echo */
    }
  }

  /** Sealing or shutting down: stop competing, give the lock up. */
  private async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.echoTimer) clearInterval(this.echoTimer);
    this.timer = this.echoTimer = null;
    await this.tick;
    await this.backend.releaseLock();
    this.signature.forget();
    this.role = 'sealed';
    this.activeSince = null;
    this.leader = null;
  }

  /** Nodes heard from in the last 30 s (sys/ha-status). */
  async nodes(): Promise<Array<Record<string, unknown>>> {
    const list = await this.backend.echoes(30_000);
    const active = this.leader?.node_id;
    return list
      .map((n) => ({
        hostname: n.info.hostname ?? '',
        api_address: n.info.api_address ?? '',
        cluster_address: n.info.cluster_address ?? '',
        active_node: n.nodeId === active,
        last_echo: n.nodeId === active ? null : n.lastEcho.toISOString(),
        echo_duration_ms: 0,
        clock_skew_ms: 0,
        version: n.info.version ?? '',
        replication_primary_canary_age_ms: 0,
      }))
      .sort((a, b) => String(a.api_address).localeCompare(String(b.api_address)));
  }

  // ---- read-your-writes (X-Vault-Index) ----

  private async loadIndexKey(): Promise<void> {
    const k = await this.core.barrier.get(INDEX_KEY);
    if (k) this.indexKey = k;
  }

  private async ensureIndexKey(): Promise<void> {
    await this.loadIndexKey();
    if (this.indexKey) return;
    const k = randomBytes(32);
    await this.core.barrier.put(INDEX_KEY, k);
    this.indexKey = k;
  }

  private clusterId(): string {
    return this.core.sealConfig?.storage_id ?? '';
  }

  /**
   * X-Vault-Index after a write: Vault Enterprise's form, base64 of
   * `v1:<cluster id>:<local index>:<replicated index>:<hmac>` (cluster-wire.md §4.2), so Vault's Go
   * client can parse it. The local index is the change sequence of this node's last write.
   */
  indexHeader(): string | null {
    const seq = this.backend.writtenIndex();
    if (!seq || !this.indexKey) return null;
    const text = `v1:${this.clusterId()}:${seq}:0`;
    const mac = createHmac('sha256', this.indexKey).update(text).digest('hex');
    return Buffer.from(`${text}:${mac}`).toString('base64');
  }

  /** The highest valid index among X-Vault-Index values (0 when none apply to this cluster). */
  requiredIndex(values: string | string[] | undefined): number {
    if (!values || !this.indexKey) return 0;
    let max = 0;
    for (const raw of Array.isArray(values) ? values : values.split(',')) {
      let text: string;
      try {
        text = Buffer.from(raw.trim(), 'base64').toString('utf8');
      } catch {
        continue;
      }
      const parts = text.split(':');
      if (parts.length !== 5 || parts[0] !== 'v1' || parts[1] !== this.clusterId()) continue;
      const body = parts.slice(0, 4).join(':');
      const want = createHmac('sha256', this.indexKey).update(body).digest();
      const got = Buffer.from(parts[4]!, 'hex');
      if (got.length !== want.length || !timingSafeEqual(got, want)) continue;
      const n = Number(parts[2]);
      if (Number.isSafeInteger(n) && n > max) max = n;
    }
    return max;
  }
}

/** The HA status for system routes. */
export function haStatusOf(cluster: Cluster | null, core: SealView): HaStatus {
  if (!cluster) {
    return {
      haEnabled: false,
      role: core.isSealed() ? 'sealed' : 'active',
      isSelf: false,
      activeTime: null,
      leaderAddress: '',
      leaderClusterAddress: '',
      clusterName: 'keyhold',
      standbyReads: false,
    };
  }
  const active = cluster.role === 'active';
  return {
    haEnabled: true,
    role: cluster.role,
    isSelf: active,
    activeTime: active ? (cluster.activeSince?.toISOString() ?? null) : null,
    leaderAddress: cluster.leader?.api_addr ?? '',
    leaderClusterAddress: cluster.leader?.cluster_addr ?? '',
    clusterName: cluster.opts.clusterName ?? 'keyhold',
    standbyReads: !cluster.opts.disableStandbyReads,
  };
}
