/** `keyhold server`: config -> storage -> unseal -> listen -> graceful stop. */
import { chmodSync, existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { LogControl } from '../framework/log-control.js';
import { runtimeDir } from '../framework/paths.js';
import { resolveConfig, type ResolvedConfig, type ServerFlags } from './config.js';
import { ConfigError } from './config-values.js';
import { InmemBackend } from '../storage/inmem.js';
import { FileBackend } from '../storage/file.js';
import type { Backend } from '../storage/backend.js';
import { NoKeychain, type Keychain } from '../seal/keychain.js';
import { OsKeychain } from '../seal/os-keychain.js';
import { buildSeals } from '../seal/seal-config.js';
import type { ConfiguredSeals } from '../seal/wrapper.js';
import { Core } from './core/core.js';
import { auditBrokerOf } from '../audit/audit-broker.js';
import { Router } from './router.js';
import { PostgresBackend, PostgresConfigError } from '../storage/postgres.js';
import { Cluster, otherClusterReason } from './cluster.js';
import { readSealConfig } from '../seal/seal.js';
import { stateDir } from '../framework/paths.js';
import { join } from 'node:path';
import { ClusterRouting } from './forward.js';
import { DEFAULT_LIMITS, startListeners, type ListenerSpec, type Listeners } from './http.js';
import { VERSION } from '../version.js';
import { releaseLongPolls } from '../engines/kv/kv-changes.js';
import { setupTelemetry } from './telemetry-setup.js';

export { loadConfigFile, resolveConfig, type ResolvedConfig, type ServerConfig, type ServerFlags } from './config.js';
export { ConfigError } from './config-values.js';

/** Wait after sys/step-down before competing again: Vault's 10 s, shorter for tests (KEYHOLD_STEP_DOWN_WAIT_MS). */
function stepDownWait(env: NodeJS.ProcessEnv): number {
  const n = Number(env.KEYHOLD_STEP_DOWN_WAIT_MS);
  return Number.isFinite(n) &&
    n >= 0 &&
    env.KEYHOLD_STEP_DOWN_WAIT_MS !== '' &&
    env.KEYHOLD_STEP_DOWN_WAIT_MS !== undefined
    ? n
    : 10_000;
}

/** Keep the default runtime folder private (0700) even if something loosened it. */
function tightenDefaultRuntimeDir(specs: ListenerSpec[]): void {
  const rt = runtimeDir();
  for (const s of specs) {
    if (s.type !== 'unix' || dirname(s.path) !== rt || !existsSync(rt)) continue;
    if ((statSync(rt).mode & 0o077) !== 0) chmodSync(rt, 0o700);
  }
}

/** The storage the config names, opened and checked: no migration under way, this node's cluster, api_addr with HA. */
async function openStorage(
  cfg: ResolvedConfig,
  flags: ServerFlags,
  logs: LogControl,
): Promise<{ backend: Backend; pgBackend: PostgresBackend | null; ha: PostgresBackend | null; identityFile: string }> {
  let backend: Backend;
  let pgBackend: PostgresBackend | null = null;
  if (cfg.storage.type === 'inmem') backend = new InmemBackend();
  else if (cfg.storage.type === 'postgresql') {
    try {
      const storageLog = logs.logger('storage');
      pgBackend = new PostgresBackend(cfg.storage.params ?? {}, { log: (msg, fields) => storageLog.warn(msg, fields) });
      await pgBackend.open();
    } catch (e) {
      await pgBackend?.close().catch(() => {});
      if (e instanceof PostgresConfigError) throw new ConfigError(`config ${flags.config ?? ''}: ${e.message}`);
      throw e;
    }
    backend = pgBackend;
  } else {
    const fb = new FileBackend(cfg.storage.path!);
    fb.openSync();
    backend = fb;
  }
  // Vault refuses to start on storage a migration is copying (operator migrate's lock record).
  const migrating = await backend.get('core/migration');
  if (migrating) {
    await backend.close();
    let started = '?';
    try {
      started = String((JSON.parse(migrating.toString('utf8')) as { start?: string }).start);
    } catch {
      /* unreadable */
    }
    throw new ConfigError(
      `storage migration in progress (started: ${started}); wait for \`keyhold operator migrate\` to finish, or remove a stale lock with \`keyhold operator migrate -config FILE -reset\``,
    );
  }
  const identityFile = join(stateDir(process.env), 'cluster-node.json');
  if (pgBackend) {
    const why = otherClusterReason(identityFile, (await readSealConfig(pgBackend))?.storage_id, pgBackend.describe());
    if (why) {
      await pgBackend.close();
      throw new ConfigError(`config ${flags.config ?? ''}: storage.postgresql: ${why}`);
    }
  }
  const ha = pgBackend?.haEnabled() ? pgBackend : null;
  if (ha && !cfg.api_addr) {
    await ha.close();
    throw new ConfigError(
      `config ${flags.config ?? ''}: api_addr: required with ha_enabled (standbys forward writes to the active's api_addr)`,
    );
  }
  return { backend, pgBackend, ha, identityFile };
}

/** The start banner: version, addresses, storage, seal state (and the root token in dev mode). */
function banner(dev: boolean, addresses: string[], backend: Backend, core: Core, devToken: string | undefined): string {
  const lines = [
    `==> keyhold server started${dev ? ' in dev mode (in-memory storage, unsealed)' : ''}`,
    `    Version: ${VERSION}`,
  ];
  for (const a of addresses) lines.push(`    Listening on: ${a}`);
  lines.push(`    Storage: ${backend.describe()}`);
  lines.push(
    `    Seal: ${core.sealer.barrierType}${core.sealer.migration ? ` (migration to ${core.sealer.configuredType} pending: keyhold operator unseal -migrate)` : ''}`,
  );
  lines.push(
    `    Sealed: ${core.isSealed()}${!core.isInitialized() ? ' (not initialised: run `keyhold operator init`)' : ''}`,
  );
  if (devToken)
    lines.push(
      `    Root Token: ${devToken}`,
      '',
      `    export KEYHOLD_ADDR='${addresses[0]}'`,
      `    export KEYHOLD_TOKEN='${devToken}'`,
    );
  return lines.join('\n') + '\n';
}

/** Run the daemon until SIGTERM/SIGINT. */
export async function runServer(flags: ServerFlags): Promise<void> {
  const cfg = resolveConfig(flags);
  // share: named loggers whose levels sys/loggers changes at runtime, tapped by sys/monitor.
  const logs = new LogControl(cfg.log_level);
  const logger = logs.logger('core');
  const { backend, pgBackend, ha, identityFile } = await openStorage(cfg, flags, logs);
  const keychain: Keychain = cfg.dev || cfg.keychain === 'none' ? new NoKeychain() : new OsKeychain();
  let seals: ConfiguredSeals | undefined;
  if (!cfg.dev) {
    try {
      seals = await buildSeals(
        cfg.seal === undefined ? [] : Array.isArray(cfg.seal) ? cfg.seal : [cfg.seal],
        process.env,
        logger,
      );
    } catch (e) {
      await backend.close();
      throw new ConfigError(`config${flags.config ? ` ${flags.config}` : ''}: ${(e as Error).message}`);
    }
  }
  const core = new Core({
    backend,
    keychain,
    logger,
    maxRequestSize: cfg.max_request_size,
    version: VERSION,
    seals,
    logs,
    kmsLibraries: cfg.kmsLibraries.map((l) => ({ type: 'pkcs11' as const, name: l.name, library: l.library })),
    standby: ha !== null,
    apiAddr: cfg.api_addr,
    reportedVersion: cfg.reported_vault_version,
  });
  if (ha) {
    const cluster = new Cluster(core, ha, {
      apiAddr: cfg.api_addr!,
      clusterAddr: cfg.cluster_addr,
      clusterName: cfg.cluster_name,
      disableStandbyReads: cfg.disable_standby_reads ?? false,
      stepDownWaitMs: stepDownWait(process.env),
      identityFile,
    });
    core.cluster = new ClusterRouting(cluster);
  }
  // Metrics (issue 27): only with a telemetry stanza.
  const telemetry = setupTelemetry(core, cfg.telemetry, {
    unauthenticatedAccess: (cfg.listeners ?? []).some((l) => l.unauthenticated_metrics_access),
    logger,
  });
  let devToken: string | undefined;
  let listeners: Listeners;
  try {
    if (cfg.dev) {
      const r = await core.init({ useKeychain: false, rootTokenId: cfg.dev_root_token });
      devToken = r.rootToken;
      // `vault server -dev` mounts only secret/: scripts written for it enable transit themselves.
      if (cfg.dev_mounts === 'keyhold')
        await core.mount('transit/', 'transit', { description: 'transit engine (dev)' });
      await core.mount('secret/', 'kv', { description: 'key/value secret storage', options: { version: '2' } });
    } else {
      await core.start();
      if (pgBackend && !core.isInitialized()) {
        // Shared storage: notice when another node initialises it (status, health, unseal from the keychain).
        const poll = setInterval(() => {
          if (core.isInitialized()) return clearInterval(poll);
          void core.refreshSealConfig().catch(() => {});
        }, 1000);
        poll.unref();
      }
    }
    tightenDefaultRuntimeDir(cfg.listenerSpecs);
    const router = new Router(core);
    listeners = await startListeners(
      cfg.listenerSpecs,
      (req, res) => void router.handle(req, res),
      DEFAULT_LIMITS,
      (req, res) => void router.handle(req, res),
    );
  } catch (e) {
    await core.close();
    throw e;
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      // A second signal: stop waiting for in-flight requests.
      logger.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    stopping = true;
    logger.info('shutting down', { signal });
    try {
      // KV event long polls (MOUNT/events?wait=) answer now instead of holding the drain.
      releaseLongPolls();
      // Monitor streams never finish on their own: end them so in-flight requests can drain.
      logs.closeMonitors();
      await listeners.close();
      telemetry?.close();
      await core.close();
      logger.info('stopped');
      process.exit(0);
    } catch (e) {
      logger.error('shutdown failed', { error: (e as Error).message });
      process.exit(1);
    }
  };
  // Before the banner: whoever waits for "Listening on" may signal at once, and until a listener is
  // added the signal's default action would kill the daemon without the graceful stop (exit 0).
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // One write: whoever reads the banner (a script waiting for "Listening on", then the root token)
  // never sees half of it.
  process.stdout.write(banner(cfg.dev === true, listeners.addresses, backend, core, devToken));
  // Log rotation: reopen audit files (as Vault does on SIGHUP).
  process.on('SIGHUP', () => void auditBrokerOf(core)?.reopen());
}
