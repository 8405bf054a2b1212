/**
 * Server configuration: Vault's HCL (or JSON) format, keyhold's older JSON format, and flags (which
 * win). A bad file stops the server with one line naming the file, the line and the key:
 *   config /etc/keyhold/node.hcl:12: storage.postgresql.tabel: unknown key (allowed: connection_url, ...)
 *
 * Vault facts followed (shared/reference/cluster-wire.md §1.1, §5): storage/ha_storage stanza values
 * become strings (non-strings JSON-encoded, so `ha_enabled = true` and `"true"` both enable HA);
 * top-level booleans are weakly parsed (`true`, `"true"`, `1`, `"1"`, `"t"`); `backend`/`ha_backend`
 * are aliases; a `storage` stanza may carry `redirect_addr`/`cluster_addr`, which top-level settings
 * override; listeners are repeatable; `seal` may also be spelled `kms`/`hsm`.
 *
 * This file holds the shapes, keyhold's older JSON format, the top-level keys of Vault's format and
 * the merge with flags; config-values.ts reads one value (and holds ConfigError), config-storage.ts
 * and config-listeners.ts read those stanzas.
 */
import { readFileSync } from 'node:fs';
import { HclSyntaxError, looksLikeJson, parseHcl, type HclItem, type HclObject } from '../framework/hcl.js';
import type { LogLevel } from '../framework/logger.js';
import { defaultSocket, defaultStoragePath } from '../framework/paths.js';
import type { ListenerSpec } from './http.js';
import { reportedVersionProblem } from '../engines/sys/reported-version.js';
import { parseTelemetryStanza, type TelemetryConfig } from '../telemetry/telemetry-config.js';
import {
  At,
  ConfigError,
  describeType,
  expandListItems,
  positiveInt,
  stanzas,
  str,
  url,
  weakBool,
} from './config-values.js';
import { storageStanza, type StorageConfig, type StorageType } from './config-storage.js';
import { listenerStanzas, type ClientCertConfig, type ListenerConfig } from './config-listeners.js';

/** Daemon configuration from the file (HCL or JSON; flags override). */
export interface ServerConfig {
  storage?: StorageConfig;
  /** Separate HA lock backend (`ha_storage`), when `storage` has none. */
  ha_storage?: StorageConfig;
  listeners?: ListenerConfig[];
  max_request_size?: number;
  log_level?: LogLevel;
  keychain?: 'os' | 'none';
  dev?: boolean;
  dev_root_token?: string;
  /** URL clients reach this node at (standbys forward writes to the active's). */
  api_addr?: string;
  cluster_addr?: string;
  cluster_name?: string;
  /** The Vault version sys/seal-status and sys/health report (engines/sys/reported-version.ts); keyhold's own is kept as keyhold_version. */
  reported_vault_version?: string;
  /** Standbys forward every request instead of serving reads (OpenBao's option). */
  disable_standby_reads?: boolean;
  disable_clustering?: boolean;
  /** Accepted for Vault compatibility; keyhold does not use mlock. */
  disable_mlock?: boolean;
  /** Accepted for Vault compatibility; keyhold has no web UI. */
  ui?: boolean;
  /** `seal "<type>" { ... }`: consumed by the seal (auto-unseal); a list of two during a seal migration (the old one `disabled`). */
  seal?: { type: string; params: Record<string, unknown> } | Array<{ type: string; params: Record<string, unknown> }>;
  /** `kms_library "pkcs11" { name, library }` stanzas: consumed by managed keys. */
  kmsLibraries?: Array<{ type: string; name: string; library: string }>;
  /** `telemetry { ... }`: metrics collection (src/telemetry); absent, nothing is collected. */
  telemetry?: TelemetryConfig;
}

/** Flags of `keyhold server`. */
export interface ServerFlags {
  config?: string;
  dev?: boolean;
  devRootToken?: string;
  /** Dev mode's mounts: keyhold's (`transit/` and `secret/`) or the vault CLI's (`secret/` only). */
  devMounts?: 'keyhold' | 'vault';
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

/** The effective configuration after merging file, environment and flags. */
export type ResolvedConfig = ServerConfig & {
  max_request_size: number;
  log_level: LogLevel;
  keychain: 'os' | 'none';
  storage: { type: StorageType; path?: string; params?: Record<string, string> };
  listenerSpecs: ListenerSpec[];
  kmsLibraries: Array<{ type: string; name: string; library: string }>;
  /** Dev mode's mounts (ServerFlags.devMounts). */
  dev_mounts: 'keyhold' | 'vault';
};

const LOG_LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error', 'off'];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------
// keyhold's first JSON format ({"storage": {"type", "path"}, "listeners": [...]}), kept as it was.

/** Keys the legacy JSON file may hold, and a check for each (facts in a table). */
const LEGACY_KEYS: Record<string, (v: unknown) => string | null> = {
  storage: (v) => {
    if (!isObject(v)) return 'must be an object {"type": "file"|"inmem", "path": "..."}';
    const extra = Object.keys(v).filter((k) => k !== 'type' && k !== 'path');
    if (extra.length) return `unknown key "${extra[0]}" (allowed: type, path)`;
    if (v.type !== undefined && v.type !== 'file' && v.type !== 'inmem') return 'type must be "file" or "inmem"';
    if (v.path !== undefined && (typeof v.path !== 'string' || v.path === '')) return 'path must be a non-empty string';
    return null;
  },
  listeners: (v) => {
    if (!Array.isArray(v))
      return 'must be a list of {"type": "unix", "path"} or {"type": "tcp", "address", "tls_cert", "tls_key"}';
    for (const [i, l] of v.entries()) {
      if (!isObject(l)) return `[${i}] must be an object`;
      if (
        l.max_request_size !== undefined &&
        !(Number.isInteger(l.max_request_size) && (l.max_request_size as number) > 0)
      )
        return `[${i}].max_request_size must be a positive integer (bytes)`;
      if (l.type === 'unix') {
        if (l.path !== undefined && (typeof l.path !== 'string' || l.path === ''))
          return `[${i}].path must be a non-empty string`;
      } else if (l.type === 'tcp') {
        if (typeof l.address !== 'string' || !/^.+:\d+$/.test(l.address)) return `[${i}].address must be "host:port"`;
        if ((l.tls_cert === undefined) !== (l.tls_key === undefined)) return `[${i}] needs both tls_cert and tls_key`;
      } else return `[${i}].type must be "unix" or "tcp"`;
    }
    return null;
  },
  max_request_size: (v) => (Number.isInteger(v) && (v as number) > 0 ? null : 'must be a positive integer (bytes)'),
  log_level: (v) =>
    typeof v === 'string' && LOG_LEVELS.includes(v) ? null : `must be one of ${LOG_LEVELS.join(', ')}`,
  keychain: (v) => (v === 'os' || v === 'none' ? null : 'must be "os" or "none"'),
  dev: (v) => (typeof v === 'boolean' ? null : 'must be true or false'),
  dev_root_token: (v) => (typeof v === 'string' && v !== '' ? null : 'must be a non-empty string'),
  reported_vault_version: reportedVersionProblem,
};

function loadLegacyJson(path: string, text: string): ServerConfig {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`config ${path}: invalid JSON (${(e as Error).message})`);
  }
  if (!isObject(doc)) throw new ConfigError(`config ${path}: must be a JSON object`);
  for (const [k, v] of Object.entries(doc)) {
    const check = LEGACY_KEYS[k];
    if (!check)
      throw new ConfigError(`config ${path}: unknown key "${k}" (allowed: ${Object.keys(LEGACY_KEYS).join(', ')})`);
    const why = check(v);
    if (why) throw new ConfigError(`config ${path}: ${k}${why.startsWith('[') ? '' : ' '}${why}`);
  }
  return doc as ServerConfig;
}

/** Keys only Vault's format has: a JSON document with one of them is read as Vault's shape. */
const VAULT_ONLY_KEYS = new Set([
  'listener',
  'backend',
  'ha_storage',
  'ha_backend',
  'seal',
  'kms',
  'hsm',
  'api_addr',
  'cluster_addr',
  'cluster_name',
  'disable_mlock',
  'ui',
  'kms_library',
  'disable_standby_reads',
  'disable_clustering',
  'disable_cache',
  'default_lease_ttl',
  'max_lease_ttl',
]);

function isLegacyJson(text: string): boolean {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return true; // let the legacy reader report the JSON error as before
  }
  if (!isObject(doc)) return true;
  if (Object.keys(doc).some((k) => VAULT_ONLY_KEYS.has(k))) return false;
  // Vault's storage shape is {"storage": {"<type>": {...}}}; keyhold's is {"storage": {"type": ...}}.
  const s = doc.storage;
  if (
    isObject(s) &&
    Object.keys(s).length === 1 &&
    ['file', 'inmem', 'postgresql'].includes(Object.keys(s)[0]!) &&
    isObject(Object.values(s)[0])
  )
    return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Vault's format (HCL or JSON), read from the syntax tree so every error names its line (the value
// readers: config-values.ts; the storage and listener stanzas: config-storage.ts, config-listeners.ts).

function sealStanza(item: HclItem, at: At): Array<{ type: string; params: Record<string, unknown> }> {
  return stanzas(item, at).map((s) => sealParams(s));
}

function sealParams({ type, body, at: sat }: { type: string; body: HclObject; at: At }): {
  type: string;
  params: Record<string, unknown>;
} {
  const params: Record<string, unknown> = {};
  for (const p of body.items) {
    const pat = sat.child(p);
    if (p.key in params) pat.fail('given twice');
    // Vault converts seal parameters to strings (an HCL `true` arrives as "1"); keep HCL's value and
    // let the seal decide, but refuse shapes no seal takes.
    if (p.value.type === 'list' || p.value.type === 'object')
      return pat.fail(`must be a string, number or boolean, got ${describeType(p.value)}`);
    params[p.key] = p.value.value;
  }
  return { type, params };
}

function kmsLibraryStanzas(item: HclItem, at: At): Array<{ type: string; name: string; library: string }> {
  const out: Array<{ type: string; name: string; library: string }> = [];
  for (const { type, body, at: kat } of stanzas(item, at)) {
    if (type !== 'pkcs11') kat.fail(`unsupported kms_library type "${type}" (supported: pkcs11)`);
    const v: Record<string, string> = {};
    for (const p of body.items) {
      const pat = kat.child(p);
      if (p.key !== 'name' && p.key !== 'library') pat.fail('unknown key (allowed: name, library)');
      if (p.key in v) pat.fail('given twice');
      v[p.key] = str(p.value, pat, { nonEmpty: true });
    }
    if (!v.name) kat.fail('needs name = "<name>"');
    if (!v.library) kat.fail('needs library = "<path to the PKCS#11 .so>"');
    out.push({ type, name: v.name, library: v.library });
  }
  return out;
}

/** How each top-level key of Vault's format is read into ServerConfig (facts in a table). */
const VAULT_KEYS: Record<
  string,
  (item: HclItem, at: At, cfg: ServerConfig, ctx: { lifted: Record<string, { value: string; at: At }> }) => void
> = {
  storage: (it, at, cfg, ctx) => {
    if (cfg.storage) at.fail('only one storage stanza is allowed');
    cfg.storage = storageStanza(it, at, ctx.lifted);
  },
  ha_storage: (it, at, cfg) => {
    if (cfg.ha_storage) at.fail('only one ha_storage stanza is allowed');
    const s = storageStanza(it, at, {});
    if (s.type !== 'postgresql') at.fail(`type "${s.type}" has no HA lock (use "postgresql")`);
    cfg.ha_storage = s;
  },
  listener: (it, at, cfg) => {
    cfg.listeners = [...(cfg.listeners ?? []), ...expandListItems(it).flatMap((i) => listenerStanzas(i, at))];
  },
  seal: (it, at, cfg) => {
    // Vault allows two seal stanzas, one of them `disabled = "true"`, for a seal migration (checked by the seal).
    const prev = cfg.seal === undefined ? [] : Array.isArray(cfg.seal) ? cfg.seal : [cfg.seal];
    const all = [...prev, ...expandListItems(it).flatMap((i) => sealStanza(i, at))];
    if (all.length > 2)
      at.fail('at most two seal stanzas (the one in use and a disabled one being migrated away from)');
    cfg.seal = all.length === 1 ? all[0] : all;
  },
  kms_library: (it, at, cfg) => {
    const libs = [...(cfg.kmsLibraries ?? []), ...expandListItems(it).flatMap((i) => kmsLibraryStanzas(i, at))];
    const names = new Set<string>();
    for (const l of libs) {
      // Vault: names are unique, compared case-insensitively.
      if (names.has(l.name.toLowerCase())) at.fail(`name "${l.name}" is used twice`);
      names.add(l.name.toLowerCase());
    }
    cfg.kmsLibraries = libs;
  },
  api_addr: (it, at, cfg) => void (cfg.api_addr = url(it.value, at)),
  cluster_addr: (it, at, cfg) => void (cfg.cluster_addr = url(it.value, at)),
  cluster_name: (it, at, cfg) => void (cfg.cluster_name = str(it.value, at, { nonEmpty: true })),
  reported_vault_version: (it, at, cfg) => {
    const v = str(it.value, at, { nonEmpty: true });
    const why = reportedVersionProblem(v);
    if (why) at.fail(why);
    cfg.reported_vault_version = v;
  },
  log_level: (it, at, cfg) => {
    const s = str(it.value, at).toLowerCase();
    // Vault's levels: trace/debug/info/warn/error (also "warning", "err").
    const map: Record<string, LogLevel> = {
      trace: 'debug',
      debug: 'debug',
      info: 'info',
      warn: 'warn',
      warning: 'warn',
      error: 'error',
      err: 'error',
      off: 'off',
    };
    if (!map[s]) at.fail(`must be one of trace, debug, info, warn, error, off; got "${s}"`);
    cfg.log_level = map[s];
  },
  disable_mlock: (it, at, cfg) => void (cfg.disable_mlock = weakBool(it.value, at)),
  ui: (it, at, cfg) => void (cfg.ui = weakBool(it.value, at)),
  disable_standby_reads: (it, at, cfg) => void (cfg.disable_standby_reads = weakBool(it.value, at)),
  disable_clustering: (it, at, cfg) => void (cfg.disable_clustering = weakBool(it.value, at)),
  keychain: (it, at, cfg) => {
    const s = str(it.value, at);
    if (s !== 'os' && s !== 'none') return at.fail(`must be "os" or "none", got "${s}"`);
    cfg.keychain = s;
  },
  max_request_size: (it, at, cfg) =>
    void (cfg.max_request_size = positiveInt(it.value, at, 'a positive integer (bytes)')),
  telemetry: (it, at, cfg) =>
    void (cfg.telemetry = parseTelemetryStanza(it.value, (k, why) => new At(at.file, at.line, k).fail(why))),
};
const ALIASES: Record<string, string> = { backend: 'storage', ha_backend: 'ha_storage', kms: 'seal', hsm: 'seal' };

/** Read Vault's format (HCL or JSON text) into ServerConfig; errors name file, line and key. */
export function parseVaultConfig(path: string, text: string): ServerConfig {
  let doc: HclObject;
  try {
    doc = parseHcl(text);
  } catch (e) {
    if (e instanceof HclSyntaxError)
      throw new ConfigError(`config ${path}:${e.line}: syntax error: ${e.reason} (column ${e.column})`);
    throw e;
  }
  const cfg: ServerConfig = {};
  const ctx = { lifted: {} as Record<string, { value: string; at: At }> };
  const root = new At(path, 1, '');
  const seen = new Set<string>();
  for (const item of doc.items) {
    const name = ALIASES[item.key] ?? item.key;
    const at = root.child(item);
    const read = VAULT_KEYS[name];
    if (!read)
      throw new ConfigError(
        `config ${path}:${item.line}: ${item.key}: unknown key (allowed: ${Object.keys(VAULT_KEYS).join(', ')})`,
      );
    const repeatable = name === 'listener' || name === 'kms_library';
    if (!repeatable && seen.has(name) && name !== 'storage' && name !== 'ha_storage' && name !== 'seal')
      at.fail('given twice');
    seen.add(name);
    read(item, at, cfg, ctx);
  }
  // Lifted storage keys act as top-level settings, which win (Vault's config.go).
  const l = ctx.lifted;
  const redirect = l.redirect_addr ?? l.advertise_addr;
  if (redirect && !cfg.api_addr)
    cfg.api_addr = url({ type: 'string', value: redirect.value, line: redirect.at.line, column: 1 }, redirect.at);
  if (l.cluster_addr && !cfg.cluster_addr)
    cfg.cluster_addr = url(
      { type: 'string', value: l.cluster_addr.value, line: l.cluster_addr.at.line, column: 1 },
      l.cluster_addr.at,
    );
  if (l.disable_clustering && cfg.disable_clustering === undefined)
    cfg.disable_clustering = weakBool(
      { type: 'string', value: l.disable_clustering.value, line: 0, column: 0 },
      l.disable_clustering.at,
    );
  return cfg;
}

/** Read and validate a config file: Vault's HCL/JSON format, or keyhold's older JSON format. */
export function loadConfigFile(path: string): ServerConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`config ${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const json = path.endsWith('.json') || looksLikeJson(text);
  if (json && isLegacyJson(text)) return loadLegacyJson(path, text);
  return parseVaultConfig(path, text);
}

/** Merge the config file with environment and flags (flags win, then environment, then the file). */
export function resolveConfig(flags: ServerFlags, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const file: ServerConfig = flags.config ? loadConfigFile(flags.config) : {};
  const dev = flags.dev ?? file.dev ?? false;
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined))
    throw new ConfigError('--tls-cert and --tls-key go together');
  if (flags.maxRequestSize !== undefined && !(Number.isInteger(flags.maxRequestSize) && flags.maxRequestSize > 0)) {
    throw new ConfigError('--max-request-size must be a positive integer (bytes)');
  }
  for (const a of flags.listen ?? [])
    if (!/^.+:\d+$/.test(a)) throw new ConfigError(`--listen must be host:port, got "${a}"`);
  const specs: ListenerSpec[] = [];
  const fileListeners = file.listeners ?? [];
  const fileUnix = fileListeners.find((l) => l.type === 'unix') as
    | { path?: string; max_request_size?: number; socket_mode?: number }
    | undefined;
  const socketPath = flags.socket ?? fileUnix?.path;
  const tcp: ListenerSpec[] = flags.listen?.length
    ? flags.listen.map((address) => ({ type: 'tcp' as const, address, tlsCert: flags.tlsCert, tlsKey: flags.tlsKey }))
    : fileListeners
        .filter((l) => l.type === 'tcp')
        .map((l) => {
          const t = l as {
            address: string;
            tls_cert?: string;
            tls_key?: string;
            max_request_size?: number;
          } & ClientCertConfig;
          return {
            type: 'tcp' as const,
            address: t.address,
            tlsCert: flags.tlsCert ?? t.tls_cert,
            tlsKey: flags.tlsKey ?? t.tls_key,
            maxRequestSize: flags.maxRequestSize ?? t.max_request_size,
            ...(t.tls_require_and_verify_client_cert ? { tlsRequireClientCert: true } : {}),
            ...(t.tls_client_ca_file ? { tlsClientCaFile: t.tls_client_ca_file } : {}),
            ...(t.tls_disable_client_certs ? { tlsDisableClientCerts: true } : {}),
          };
        });
  // A Unix socket unless disabled, or unless the config file names only TCP listeners.
  const wantsUnix =
    !flags.noSocket &&
    (flags.socket !== undefined || fileUnix !== undefined || fileListeners.length === 0 || tcp.length === 0);
  if (wantsUnix) {
    specs.push({
      type: 'unix',
      path: socketPath ?? defaultSocket(env),
      maxRequestSize: flags.maxRequestSize ?? fileUnix?.max_request_size,
      ...(fileUnix?.socket_mode !== undefined ? { socketMode: fileUnix.socket_mode } : {}),
    });
  }
  specs.push(...tcp);
  if (specs.length === 0) throw new ConfigError('no listener: give --listen host:port or drop --no-socket');
  const storageType = file.storage?.type ?? 'file';
  const storage: ResolvedConfig['storage'] = dev
    ? { type: 'inmem' }
    : storageType === 'file'
      ? {
          type: 'file',
          path: flags.storagePath ?? file.storage?.path ?? defaultStoragePath(env),
          ...(file.storage?.params ? { params: file.storage.params } : {}),
        }
      : { type: storageType, params: { ...(file.storage?.params ?? {}) } };
  // Vault: VAULT_API_ADDR / VAULT_CLUSTER_ADDR win over the file.
  const apiAddr = env.KEYHOLD_API_ADDR || env.VAULT_API_ADDR || file.api_addr;
  const clusterAddr = env.KEYHOLD_CLUSTER_ADDR || env.VAULT_CLUSTER_ADDR || file.cluster_addr;
  const reported = env.KEYHOLD_REPORTED_VAULT_VERSION || file.reported_vault_version;
  // Read where a PKCS#11 key opens (kms/pkcs11/pkcs11-key.ts); a value it could not use is refused here.
  const inline = env.KEYHOLD_PKCS11_INLINE_MAX_US;
  if (inline !== undefined && inline !== '' && !/^\d+(\.\d+)?$/.test(inline.trim()))
    throw new ConfigError(
      `KEYHOLD_PKCS11_INLINE_MAX_US must be a number of microseconds (0 keeps every PKCS#11 call on its worker thread), got "${inline}"`,
    );
  if (env.KEYHOLD_REPORTED_VAULT_VERSION) {
    const why = reportedVersionProblem(env.KEYHOLD_REPORTED_VAULT_VERSION);
    if (why) throw new ConfigError(`KEYHOLD_REPORTED_VAULT_VERSION ${why}`);
  }
  return {
    ...file,
    dev,
    dev_root_token: flags.devRootToken ?? file.dev_root_token,
    dev_mounts: flags.devMounts ?? 'keyhold',
    storage,
    ...(apiAddr ? { api_addr: apiAddr.replace(/\/+$/, '') } : {}),
    ...(clusterAddr ? { cluster_addr: clusterAddr } : {}),
    ...(reported ? { reported_vault_version: reported } : {}),
    max_request_size: flags.maxRequestSize ?? file.max_request_size ?? 32 * 1024 * 1024,
    log_level: flags.logLevel ?? file.log_level ?? 'info',
    keychain: flags.keychain ?? file.keychain ?? 'os',
    listenerSpecs: specs,
    kmsLibraries: file.kmsLibraries ?? [],
  };
}
