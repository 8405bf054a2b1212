/**
 * Telemetry wiring of the daemon (issue 27): the Telemetry object from the config's `telemetry`
 * stanza, its hooks into the router (core.telemetry) and the barrier, and the gauges read when
 * metrics are scraped: seal and HA state, the barrier key term, PostgreSQL pool waits, and usage
 * gauges (token count) every usage_gauge_period on the node that writes.
 */
import type { Logger } from '../framework/context.js';
import { Telemetry } from '../telemetry/telemetry.js';
import type { TelemetryConfig } from '../telemetry/telemetry-config.js';
import type { Core } from './core/core.js';
import type { SyncEngine } from '../sync/sync-engine.js';
import { DESTINATION_TYPES } from '../sync/destinations/index.js';
import type { DestinationType } from '../sync/types.js';

/** A backend that can report its connection pool (PostgreSQL). */
interface PooledBackend {
  poolStats?(): { total: number; idle: number; waiting: number };
}

/** Build the daemon's telemetry and attach it to `core`; null when the config has no telemetry stanza. */
export function setupTelemetry(
  core: Core,
  config: TelemetryConfig | undefined,
  opts: { unauthenticatedAccess: boolean; logger: Logger },
): Telemetry | null {
  if (!config) return null;
  const t = new Telemetry(config, { unauthenticatedAccess: opts.unauthenticatedAccess });
  core.telemetry = t;
  core.barrier.observer = (op, t0, tCommit) => t.barrierOp(op, t0, tCommit);
  const r = t.registry;
  t.addCollector(() => {
    const unsealed = !core.isSealed();
    r.gauge('vault.core.unsealed', 'Whether this node is unsealed (1) or sealed (0)').set(unsealed ? 1 : 0);
    r.gauge('vault.core.active', 'Whether this node is the active node (1) or a standby (0)').set(
      unsealed && !core.isStandby() ? 1 : 0,
    );
    if (core.cluster)
      r.gauge('vault.core.performance_standby', 'Whether this node is a standby serving reads (1)').set(
        unsealed && core.isStandby() ? 1 : 0,
      );
    if (unsealed) {
      const ks = core.barrierKeys.status(core.sealConfig?.initialized_time ?? '');
      r.gauge('keyhold.barrier.term', 'Barrier key term new records are sealed under').set(ks.term);
      r.gauge('keyhold.barrier.encryptions', 'Records sealed under the active barrier key term').set(ks.encryptions);
    }
    const sync = core.isSealed() ? undefined : core.engineOf<SyncEngine>('sys/sync/');
    if (sync?.syncer)
      r.gauge('keyhold.sync.queue_depth', 'Secret-sync operations queued (with delayed retries)').set(
        sync.syncer.queued,
      );
    const pool = (core.backend as PooledBackend).poolStats?.();
    if (pool) {
      r.gauge('keyhold.postgresql.pool.waiting', 'Queries waiting for a PostgreSQL connection').set(pool.waiting);
      r.gauge('keyhold.postgresql.pool.total', 'PostgreSQL connections open').set(pool.total);
      r.gauge('keyhold.postgresql.pool.idle', 'PostgreSQL connections idle').set(pool.idle);
    }
  });
  // Usage gauges (Vault's vault.token.count): a storage walk, so on a period and on the writing node only.
  t.startUsageGauges(
    async () => {
      if (core.isSealed() || core.isStandby()) return;
      const ids = await core.barrier.list('sys/token/id/');
      r.gauge('vault.token.count', 'Service tokens in storage (usage gauge)').set(ids.length);
      // Secret-sync associations by status: a walk of every destination's links, so a usage gauge too.
      const store = core.engineOf<SyncEngine>('sys/sync/')?.service.store;
      if (store) {
        const byStatus = new Map<string, number>();
        for (const type of Object.keys(DESTINATION_TYPES) as DestinationType[]) {
          for (const name of await store.destNames(type))
            for (const l of await store.links(type, name))
              byStatus.set(l.sync_status, (byStatus.get(l.sync_status) ?? 0) + 1);
        }
        r.resetGauge('keyhold.sync.associations');
        for (const [status, n] of byStatus)
          r.gauge('keyhold.sync.associations', 'Secret-sync associations by status (usage gauge)', { status }).set(n);
      }
    },
    (e) => opts.logger.warn('usage gauge collection failed', { error: (e as Error)?.message }),
  );
  return t;
}
