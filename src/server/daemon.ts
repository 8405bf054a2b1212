/** `keyhold server`: config -> storage -> unseal -> listen -> graceful stop. */
import { readFileSync } from 'node:fs';
import { createLogger, type LogLevel } from '../framework/logger.js';
import { defaultSocket, defaultStoragePath } from '../framework/paths.js';
import { InmemBackend } from '../storage/inmem.js';
import { FileBackend } from '../storage/file.js';
import type { Backend } from '../storage/backend.js';
import { NoKeychain, type Keychain } from '../seal/keychain.js';
import { OsKeychain } from '../seal/os-keychain.js';
import { Core } from './core.js';
import { Router } from './router.js';
import { DEFAULT_LIMITS, startListeners, type ListenerSpec } from './http.js';
import { VERSION } from '../version.js';

/** Daemon configuration (JSON config file; flags override). */
export interface ServerConfig {
  storage?: { type?: 'file' | 'inmem'; path?: string };
  listeners?: Array<{ type: 'unix'; path?: string } | { type: 'tcp'; address: string; tls_cert?: string; tls_key?: string }>;
  max_request_size?: number;
  log_level?: LogLevel;
  keychain?: 'os' | 'none';
  dev?: boolean;
  dev_root_token?: string;
}

/** Flags of `keyhold server`. */
export interface ServerFlags {
  config?: string;
  dev?: boolean;
  devRootToken?: string;
  socket?: string;
  noSocket?: boolean;
  listen?: string[];
  tlsCert?: string;
  tlsKey?: string;
  storagePath?: string;
  maxRequestSize?: number;
  logLevel?: LogLevel;
  keychain?: 'os' | 'none';
}

/** Merge the config file with flags (flags win). */
export function resolveConfig(flags: ServerFlags): Required<Pick<ServerConfig, 'max_request_size' | 'log_level'>> & ServerConfig & { listenerSpecs: ListenerSpec[] } {
  const file: ServerConfig = flags.config ? (JSON.parse(readFileSync(flags.config, 'utf8')) as ServerConfig) : {};
  const dev = flags.dev ?? file.dev ?? false;
  const specs: ListenerSpec[] = [];
  const fileListeners = file.listeners ?? [];
  const socketPath = flags.socket ?? (fileListeners.find((l) => l.type === 'unix') as { path?: string } | undefined)?.path;
  const tcp = flags.listen?.length
    ? flags.listen.map((address) => ({ type: 'tcp' as const, address, tlsCert: flags.tlsCert, tlsKey: flags.tlsKey }))
    : fileListeners.filter((l) => l.type === 'tcp').map((l) => {
        const t = l as { address: string; tls_cert?: string; tls_key?: string };
        return { type: 'tcp' as const, address: t.address, tlsCert: flags.tlsCert ?? t.tls_cert, tlsKey: flags.tlsKey ?? t.tls_key };
      });
  const wantsUnix = !flags.noSocket && (socketPath !== undefined || fileListeners.length === 0 || fileListeners.some((l) => l.type === 'unix') || tcp.length === 0);
  if (wantsUnix) specs.push({ type: 'unix', path: socketPath ?? defaultSocket() });
  specs.push(...tcp);
  return {
    ...file,
    dev,
    dev_root_token: flags.devRootToken ?? file.dev_root_token,
    storage: dev ? { type: 'inmem' } : { type: file.storage?.type ?? 'file', path: flags.storagePath ?? file.storage?.path ?? defaultStoragePath() },
    max_request_size: flags.maxRequestSize ?? file.max_request_size ?? 32 * 1024 * 1024,
    log_level: flags.logLevel ?? file.log_level ?? 'info',
    keychain: flags.keychain ?? file.keychain ?? 'os',
    listenerSpecs: specs,
  };
}

/** Run the daemon until SIGTERM/SIGINT. */
export async function runServer(flags: ServerFlags): Promise<void> {
  const cfg = resolveConfig(flags);
  const logger = createLogger(cfg.log_level);
  let backend: Backend;
  if (cfg.storage?.type === 'inmem') backend = new InmemBackend();
  else {
    const fb = new FileBackend(cfg.storage!.path!);
    fb.openSync();
    backend = fb;
  }
  const keychain: Keychain = cfg.dev || cfg.keychain === 'none' ? new NoKeychain() : new OsKeychain();
  const core = new Core({ backend, keychain, logger, maxRequestSize: cfg.max_request_size, version: VERSION });
  let devToken: string | undefined;
  if (cfg.dev) {
    const r = await core.init({ useKeychain: false, rootTokenId: cfg.dev_root_token });
    devToken = r.rootToken;
    await core.mount('transit/', 'transit', { description: 'transit engine (dev)' });
    await core.mount('secret/', 'kv', { description: 'key/value secret storage', options: { version: '2' } });
  } else {
    await core.start();
  }
  const router = new Router(core);
  let listeners;
  try {
    listeners = await startListeners(cfg.listenerSpecs, (req, res) => void router.handle(req, res), DEFAULT_LIMITS);
  } catch (e) {
    await core.close();
    throw e;
  }
  const out = process.stdout;
  out.write(`==> keyhold server started${cfg.dev ? ' in dev mode (in-memory storage, unsealed)' : ''}\n`);
  for (const a of listeners.addresses) out.write(`    Listening on: ${a}\n`);
  out.write(`    Storage: ${backend.describe()}\n`);
  out.write(`    Sealed: ${core.isSealed()}${!core.isInitialized() ? ' (not initialised: run `keyhold operator init`)' : ''}\n`);
  if (devToken) {
    out.write(`    Root Token: ${devToken}\n`);
    out.write(`\n    export KEYHOLD_ADDR='${listeners.addresses[0]}'\n    export KEYHOLD_TOKEN='${devToken}'\n`);
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    await listeners.close();
    await core.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
