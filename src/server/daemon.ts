/** `keyhold server`: config -> storage -> unseal -> listen -> graceful stop. */
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { createLogger, type LogLevel } from '../framework/logger.js';
import { defaultSocket, defaultStoragePath, runtimeDir } from '../framework/paths.js';
import { InmemBackend } from '../storage/inmem.js';
import { FileBackend } from '../storage/file.js';
import type { Backend } from '../storage/backend.js';
import { NoKeychain, type Keychain } from '../seal/keychain.js';
import { OsKeychain } from '../seal/os-keychain.js';
import { Core } from './core.js';
import { auditBrokerOf } from '../audit/audit-broker.js';
import { Router } from './router.js';
import { DEFAULT_LIMITS, startListeners, type ListenerSpec, type Listeners } from './http.js';
import { VERSION } from '../version.js';
import type { KmsLibraryConfig } from '../kms/managed-keys.js';

/** Daemon configuration (JSON config file; flags override). */
export interface ServerConfig {
  storage?: { type?: 'file' | 'inmem'; path?: string };
  listeners?: Array<({ type: 'unix'; path?: string } | { type: 'tcp'; address: string; tls_cert?: string; tls_key?: string }) & { max_request_size?: number }>;
  max_request_size?: number;
  log_level?: LogLevel;
  keychain?: 'os' | 'none';
  dev?: boolean;
  dev_root_token?: string;
  /**
   * PKCS#11 modules managed keys may load (Vault's `kms_library "pkcs11" { name, library }`), in
   * Vault's JSON form `{"pkcs11": {"name": ..., "library": ...}}` (one object or a list of them).
   */
  kms_library?: unknown;
  /** The same as a typed list: `[{"type": "pkcs11", "name": "softhsm", "library": "/usr/lib/softhsm/libsofthsm2.so"}]`. */
  kms_libraries?: KmsLibraryConfig[];
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

/** The effective configuration after merging file and flags. */
export type ResolvedConfig = ServerConfig & {
  max_request_size: number;
  log_level: LogLevel;
  keychain: 'os' | 'none';
  storage: { type: 'file' | 'inmem'; path?: string };
  listenerSpecs: ListenerSpec[];
};

/** Thrown for a bad config file or flag (the CLI prints it and exits 1). */
export class ConfigError extends Error {}

const LOG_LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error', 'off'];
/** Keys the config file may hold, and a check for each (facts in a table). */
const CONFIG_KEYS: Record<string, (v: unknown) => string | null> = {
  storage: (v) => {
    if (!isObject(v)) return 'must be an object {"type": "file"|"inmem", "path": "..."}';
    const extra = Object.keys(v).filter((k) => k !== 'type' && k !== 'path');
    if (extra.length) return `unknown key "${extra[0]}" (allowed: type, path)`;
    if (v.type !== undefined && v.type !== 'file' && v.type !== 'inmem') return 'type must be "file" or "inmem"';
    if (v.path !== undefined && (typeof v.path !== 'string' || v.path === '')) return 'path must be a non-empty string';
    return null;
  },
  listeners: (v) => {
    if (!Array.isArray(v)) return 'must be a list of {"type": "unix", "path"} or {"type": "tcp", "address", "tls_cert", "tls_key"}';
    for (const [i, l] of v.entries()) {
      if (!isObject(l)) return `[${i}] must be an object`;
      if (l.max_request_size !== undefined && !(Number.isInteger(l.max_request_size) && (l.max_request_size as number) > 0)) return `[${i}].max_request_size must be a positive integer (bytes)`;
      if (l.type === 'unix') {
        if (l.path !== undefined && (typeof l.path !== 'string' || l.path === '')) return `[${i}].path must be a non-empty string`;
      } else if (l.type === 'tcp') {
        if (typeof l.address !== 'string' || !/^.+:\d+$/.test(l.address)) return `[${i}].address must be "host:port"`;
        if ((l.tls_cert === undefined) !== (l.tls_key === undefined)) return `[${i}] needs both tls_cert and tls_key`;
      } else return `[${i}].type must be "unix" or "tcp"`;
    }
    return null;
  },
  max_request_size: (v) => (Number.isInteger(v) && (v as number) > 0 ? null : 'must be a positive integer (bytes)'),
  log_level: (v) => (typeof v === 'string' && LOG_LEVELS.includes(v) ? null : `must be one of ${LOG_LEVELS.join(', ')}`),
  keychain: (v) => (v === 'os' || v === 'none' ? null : 'must be "os" or "none"'),
  dev: (v) => (typeof v === 'boolean' ? null : 'must be true or false'),
  dev_root_token: (v) => (typeof v === 'string' && v !== '' ? null : 'must be a non-empty string'),
  kms_library: (v) => kmsLibraryProblem(() => kmsLibrariesOf({ kms_library: v })),
  kms_libraries: (v) => kmsLibraryProblem(() => kmsLibrariesOf({ kms_libraries: v as KmsLibraryConfig[] })),
};

function kmsLibraryProblem(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

/** Vault's GenericNameRegex (configutil/kms_library.go). */
const KMS_NAME = /^\w(([\w.-]+)?\w)?$/;

/**
 * The `kms_library` stanzas of a config, checked as Vault checks them (reference managed-keys-wire.md
 * 1.8): type `pkcs11` only, `name` lower-cased, valid and unique, `library` not blank.
 */
export function kmsLibrariesOf(cfg: Pick<ServerConfig, 'kms_library' | 'kms_libraries'>): KmsLibraryConfig[] {
  const entries: Array<{ type: string; body: unknown }> = [];
  const addTyped = (v: unknown) => {
    if (!isObject(v)) throw new Error('kms_library entries must be objects');
    for (const [type, body] of Object.entries(v)) for (const b of Array.isArray(body) ? body : [body]) entries.push({ type, body: b });
  };
  if (cfg.kms_library !== undefined) for (const v of Array.isArray(cfg.kms_library) ? cfg.kms_library : [cfg.kms_library]) addTyped(v);
  if (cfg.kms_libraries !== undefined) {
    if (!Array.isArray(cfg.kms_libraries)) throw new Error('must be a list of {"type": "pkcs11", "name", "library"}');
    for (const e of cfg.kms_libraries) {
      if (!isObject(e)) throw new Error('entries must be objects');
      const { type, ...body } = e as Record<string, unknown>;
      entries.push({ type: String(type ?? ''), body });
    }
  }
  const out: KmsLibraryConfig[] = [];
  for (const { type: t, body } of entries) {
    const type = t.toLowerCase();
    if (!type) throw new Error('kms_library section was missing a type');
    if (type !== 'pkcs11') throw new Error(`unknown KMS type "${type}"`);
    if (!isObject(body)) throw new Error(`kms_library "${type}" must be an object with name and library`);
    const library = typeof body.library === 'string' ? body.library.trim() : '';
    if (!library) throw new Error(`library key can not be blank within kms_library type: ${type}`);
    const name = typeof body.name === 'string' ? body.name.trim().toLowerCase() : '';
    if (!name) throw new Error(`name key can not be blank within kms_library type: ${type}`);
    if (!KMS_NAME.test(name)) throw new Error(`value ('${name}') for name field contained invalid characters`);
    if (out.some((o) => o.name === name)) throw new Error(`duplicated kms_library configuration sections with name ${name}`);
    out.push({ type: 'pkcs11', name, library });
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Read and validate a JSON config file; errors name the file and the key. */
export function loadConfigFile(path: string): ServerConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`config ${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`config ${path}: invalid JSON (${(e as Error).message})`);
  }
  if (!isObject(doc)) throw new ConfigError(`config ${path}: must be a JSON object`);
  for (const [k, v] of Object.entries(doc)) {
    const check = CONFIG_KEYS[k];
    if (!check) throw new ConfigError(`config ${path}: unknown key "${k}" (allowed: ${Object.keys(CONFIG_KEYS).join(', ')})`);
    const why = check(v);
    if (why) throw new ConfigError(`config ${path}: ${k}${why.startsWith('[') ? '' : ' '}${why}`);
  }
  return doc as ServerConfig;
}

/** Merge the config file with flags (flags win). */
export function resolveConfig(flags: ServerFlags, env = process.env): ResolvedConfig {
  const file: ServerConfig = flags.config ? loadConfigFile(flags.config) : {};
  const dev = flags.dev ?? file.dev ?? false;
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) throw new ConfigError('--tls-cert and --tls-key go together');
  if (flags.maxRequestSize !== undefined && !(Number.isInteger(flags.maxRequestSize) && flags.maxRequestSize > 0)) {
    throw new ConfigError('--max-request-size must be a positive integer (bytes)');
  }
  for (const a of flags.listen ?? []) if (!/^.+:\d+$/.test(a)) throw new ConfigError(`--listen must be host:port, got "${a}"`);
  const specs: ListenerSpec[] = [];
  const fileListeners = file.listeners ?? [];
  const fileUnix = fileListeners.find((l) => l.type === 'unix') as { path?: string; max_request_size?: number } | undefined;
  const socketPath = flags.socket ?? fileUnix?.path;
  const tcp: ListenerSpec[] = flags.listen?.length
    ? flags.listen.map((address) => ({ type: 'tcp' as const, address, tlsCert: flags.tlsCert, tlsKey: flags.tlsKey }))
    : fileListeners
        .filter((l) => l.type === 'tcp')
        .map((l) => {
          const t = l as { address: string; tls_cert?: string; tls_key?: string; max_request_size?: number };
          return { type: 'tcp' as const, address: t.address, tlsCert: flags.tlsCert ?? t.tls_cert, tlsKey: flags.tlsKey ?? t.tls_key, maxRequestSize: flags.maxRequestSize ?? t.max_request_size };
        });
  // A Unix socket unless disabled, or unless the config file names only TCP listeners.
  const wantsUnix = !flags.noSocket && (flags.socket !== undefined || fileUnix !== undefined || fileListeners.length === 0 || tcp.length === 0);
  if (wantsUnix) specs.push({ type: 'unix', path: socketPath ?? defaultSocket(env), maxRequestSize: flags.maxRequestSize ?? fileUnix?.max_request_size });
  specs.push(...tcp);
  if (specs.length === 0) throw new ConfigError('no listener: give --listen host:port or drop --no-socket');
  return {
    ...file,
    dev,
    dev_root_token: flags.devRootToken ?? file.dev_root_token,
    storage: dev ? { type: 'inmem' } : { type: file.storage?.type ?? 'file', path: flags.storagePath ?? file.storage?.path ?? defaultStoragePath(env) },
    max_request_size: flags.maxRequestSize ?? file.max_request_size ?? 32 * 1024 * 1024,
    log_level: flags.logLevel ?? file.log_level ?? 'info',
    keychain: flags.keychain ?? file.keychain ?? 'os',
    listenerSpecs: specs,
  };
}

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
  const core = new Core({ backend, keychain, logger, maxRequestSize: cfg.max_request_size, version: VERSION, kmsLibraries: kmsLibrariesOf(cfg) });
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
  const out = process.stdout;
  out.write(`==> keyhold server started${cfg.dev ? ' in dev mode (in-memory storage, unsealed)' : ''}\n`);
  out.write(`    Version: ${VERSION}\n`);
  for (const a of listeners.addresses) out.write(`    Listening on: ${a}\n`);
  out.write(`    Storage: ${backend.describe()}\n`);
  out.write(`    Sealed: ${core.isSealed()}${!core.isInitialized() ? ' (not initialised: run `keyhold operator init`)' : ''}\n`);
  if (devToken) {
    out.write(`    Root Token: ${devToken}\n`);
    out.write(`\n    export KEYHOLD_ADDR='${listeners.addresses[0]}'\n    export KEYHOLD_TOKEN='${devToken}'\n`);
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
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // Log rotation: reopen audit files (as Vault does on SIGHUP).
  process.on('SIGHUP', () => void auditBrokerOf(core)?.reopen());
}
