/** `keyhold server`: config -> storage -> unseal -> listen -> graceful stop. */
import { chmodSync, existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { createLogger } from '../framework/logger.js';
import { runtimeDir } from '../framework/paths.js';
import { ConfigError, resolveConfig, type ServerFlags } from './config.js';
import { InmemBackend } from '../storage/inmem.js';
import { FileBackend } from '../storage/file.js';
import type { Backend } from '../storage/backend.js';
import { NoKeychain, type Keychain } from '../seal/keychain.js';
import { OsKeychain } from '../seal/os-keychain.js';
import { buildSeals } from '../seal/seal-config.js';
import type { ConfiguredSeals } from '../seal/wrapper.js';
import { Core } from './core.js';
import { auditBrokerOf } from '../audit/audit-broker.js';
import { Router } from './router.js';
import { DEFAULT_LIMITS, startListeners, type ListenerSpec, type Listeners } from './http.js';
import { VERSION } from '../version.js';

export { ConfigError, loadConfigFile, resolveConfig, type ResolvedConfig, type ServerConfig, type ServerFlags } from './config.js';

/** Keep the default runtime folder private (0700) even if something loosened it. */
function tightenDefaultRuntimeDir(specs: ListenerSpec[]): void {
  const rt = runtimeDir();
  for (const s of specs) {
    if (s.type !== 'unix' || dirname(s.path) !== rt || !existsSync(rt)) continue;
    if ((statSync(rt).mode & 0o077) !== 0) chmodSync(rt, 0o700);
  }
}

/** Run the daemon until SIGTERM/SIGINT. */
export async function runServer(flags: ServerFlags): Promise<void> {
  const cfg = resolveConfig(flags);
  const logger = createLogger(cfg.log_level);
  let backend: Backend;
  if (cfg.storage.type === 'inmem') backend = new InmemBackend();
  else {
    const fb = new FileBackend(cfg.storage.path!);
    fb.openSync();
    backend = fb;
  }
  const keychain: Keychain = cfg.dev || cfg.keychain === 'none' ? new NoKeychain() : new OsKeychain();
  let seals: ConfiguredSeals | undefined;
  if (!cfg.dev) {
    try {
      seals = await buildSeals(cfg.seal === undefined ? [] : Array.isArray(cfg.seal) ? cfg.seal : [cfg.seal], process.env, logger);
    } catch (e) {
      await backend.close();
      throw new ConfigError(`config${flags.config ? ` ${flags.config}` : ''}: ${(e as Error).message}`);
    }
  }
  const core = new Core({ backend, keychain, logger, maxRequestSize: cfg.max_request_size, version: VERSION, seals, kmsLibraries: cfg.kmsLibraries.map((l) => ({ type: 'pkcs11' as const, name: l.name, library: l.library })) });
  let devToken: string | undefined;
  let listeners: Listeners;
  try {
    if (cfg.dev) {
      const r = await core.init({ useKeychain: false, rootTokenId: cfg.dev_root_token });
      devToken = r.rootToken;
      await core.mount('transit/', 'transit', { description: 'transit engine (dev)' });
      await core.mount('secret/', 'kv', { description: 'key/value secret storage', options: { version: '2' } });
    } else {
      await core.start();
    }
    tightenDefaultRuntimeDir(cfg.listenerSpecs);
    const router = new Router(core);
    listeners = await startListeners(cfg.listenerSpecs, (req, res) => void router.handle(req, res), DEFAULT_LIMITS, (req, res) => void router.handle(req, res));
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
      await listeners.close();
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
  const out = process.stdout;
  out.write(`==> keyhold server started${cfg.dev ? ' in dev mode (in-memory storage, unsealed)' : ''}\n`);
  out.write(`    Version: ${VERSION}\n`);
  for (const a of listeners.addresses) out.write(`    Listening on: ${a}\n`);
  out.write(`    Storage: ${backend.describe()}\n`);
  out.write(`    Seal: ${core.sealer.barrierType}${core.sealer.migration ? ` (migration to ${core.sealer.configuredType} pending: keyhold operator unseal -migrate)` : ''}\n`);
  out.write(`    Sealed: ${core.isSealed()}${!core.isInitialized() ? ' (not initialised: run `keyhold operator init`)' : ''}\n`);
  if (devToken) {
    out.write(`    Root Token: ${devToken}\n`);
    out.write(`\n    export KEYHOLD_ADDR='${listeners.addresses[0]}'\n    export KEYHOLD_TOKEN='${devToken}'\n`);
  }
  // Log rotation: reopen audit files (as Vault does on SIGHUP).
  process.on('SIGHUP', () => void auditBrokerOf(core)?.reopen());
}
