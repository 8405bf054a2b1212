/**
 * High-availability status routes as Vault answers them (shared/reference/cluster-wire.md §2.5-2.8):
 * `sys/leader`, `sys/health` (with every status code overridable, as the Go client needs),
 * `sys/ha-status` and `sys/step-down`.
 */
import { sealed } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { SysParts } from './sys-parts.js';
import { versionFields } from './reported-version.js';

const route = routesFor<SysParts>();

/** Go's zero time, which Vault 1.14 sends as `active_time` on a node that is not active. */
const ZERO_TIME = '0001-01-01T00:00:00Z';

function rawJson(body: unknown, status = 200) {
  return { raw: { contentType: 'application/json', body: JSON.stringify(body) + '\n', status } };
}

/** Vault's weak boolean for query flags: "true", "1", "t" ...; a bare `?standbyok` is false. */
function weakBool(v: string | undefined): boolean {
  return v !== undefined && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v.trim());
}

const code = (help: string, dflt: number) => f.int(help).min(100).max(599).default(dflt);

/** The HA routes of the sys mount. */
export const haRoutes: AnyRoute[] = [
  route({
    path: 'leader',
    summary: 'High-availability status: whether this node is active and where the active node is',
    fields: {},
    unauthenticated: true,
    allowSealed: true,
    standby: 'local',
    operations: {
      read: ({ engine }) => {
        const ha = engine.cluster.haStatus();
        if (ha.haEnabled && engine.seal.isSealed()) throw sealed();
        return rawJson({
          ha_enabled: ha.haEnabled,
          is_self: ha.isSelf,
          active_time: ha.activeTime ?? ZERO_TIME,
          leader_address: ha.leaderAddress,
          leader_cluster_address: ha.leaderClusterAddress,
          performance_standby: ha.role === 'standby' && ha.standbyReads,
          performance_standby_last_remote_wal: 0,
        });
      },
    },
  }),
  route({
    path: 'health',
    summary:
      'Health check for load balancers: 200 active, 429 standby, 473 standby serving reads, 503 sealed, 501 not initialised',
    fields: {
      standbyok: f.string('A standby answers with activecode ("true")'),
      perfstandbyok: f.string('A standby serving reads answers with activecode ("true")'),
      activecode: code('Status when active', 200),
      standbycode: code('Status of a standby', 429),
      drsecondarycode: code('Status of a DR secondary (not used by keyhold)', 472),
      performancestandbycode: code('Status of a standby serving reads', 473),
      sealedcode: code('Status when sealed', 503),
      uninitcode: code('Status when not initialised', 501),
      haunhealthycode: code('Status of a standby that cannot reach the active (not used yet)', 474),
      removedcode: code('Status of a node removed from the cluster (not used by keyhold)', 530),
    },
    unauthenticated: true,
    allowSealed: true,
    standby: 'local',
    operations: {
      read: ({ engine, data }) => {
        const ha = engine.cluster.haStatus();
        const initialized = engine.seal.isInitialized();
        const isSealed = engine.seal.isSealed();
        const standby = ha.role === 'standby';
        const perf = standby && ha.standbyReads;
        const body: Record<string, unknown> = {
          initialized,
          sealed: isSealed,
          standby,
          performance_standby: perf,
          replication_performance_mode: 'disabled',
          replication_dr_mode: 'disabled',
          server_time_utc: Math.floor(engine.clock.now() / 1000),
          ...versionFields(engine.version, engine.reportedVersion),
          enterprise: false,
          echo_duration_ms: 0,
          clock_skew_ms: 0,
          replication_primary_canary_age_ms: 0,
        };
        // Vault omits the cluster name and id while sealed.
        if (!isSealed) {
          body.cluster_name = ha.clusterName;
          body.cluster_id = engine.seal.sealConfig?.storage_id ?? '';
        }
        // Precedence as Vault's http/sys_health.go: uninitialised, sealed, perf standby, standby, active.
        let status: number;
        if (!initialized) status = data.uninitcode;
        else if (isSealed) status = data.sealedcode;
        else if (perf) status = weakBool(data.perfstandbyok) ? data.activecode : data.performancestandbycode;
        else if (standby) status = weakBool(data.standbyok) ? data.activecode : data.standbycode;
        else status = data.activecode;
        return rawJson(body, status);
      },
    },
  }),
  route({
    path: 'ha-status',
    summary: 'Nodes of the cluster: the active and the standbys it has heard from',
    fields: {},
    operations: {
      read: async ({ engine }) => ({ data: { nodes: await engine.cluster.haNodes() } }),
    },
  }),
  route({
    path: 'step-down',
    summary: 'Make the active node give up the lock (another node takes over; it competes again after 10 s)',
    fields: {},
    sudo: true,
    operations: {
      update: async ({ engine }) => {
        await engine.cluster.stepDown();
      },
    },
    cli: { command: 'operator step-down' },
  }),
];
