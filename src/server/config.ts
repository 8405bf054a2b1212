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
 */
import { readFileSync } from 'node:fs';
import { HclSyntaxError, looksLikeJson, parseHcl, type HclItem, type HclObject, type HclValue } from '../framework/hcl.js';
import type { LogLevel } from '../framework/logger.js';
import { defaultSocket, defaultStoragePath } from '../framework/paths.js';
import type { ListenerSpec } from './http.js';
import { parseListenerTelemetry, parseTelemetryStanza, type TelemetryConfig } from '../telemetry/telemetry-config.js';

/** Storage backend types keyhold implements. */
export type StorageType = 'file' | 'inmem' | 'postgresql';

/** A storage stanza: its type and its parameters as strings (Vault passes backends a string map). */
export interface StorageConfig {
  type?: StorageType;
  /** file: the directory (also `params.path`). */
  path?: string;
  params?: Record<string, string>;
}

/** A listener from the config file. */
export type ListenerConfig = ({ type: 'unix'; path?: string; socket_mode?: number } | ({ type: 'tcp'; address: string; tls_cert?: string; tls_key?: string } & ClientCertConfig)) & { max_request_size?: number; unauthenticated_metrics_access?: boolean };

/** Client certificates on a TLS listener (Vault's tls_require_and_verify_client_cert, tls_client_ca_file, tls_disable_client_certs). */
export interface ClientCertConfig {
  tls_require_and_verify_client_cert?: boolean;
  tls_client_ca_file?: string;
  tls_disable_client_certs?: boolean;
}

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
};

/** Thrown for a bad config file or flag (the CLI prints it and exits 1). */
export class ConfigError extends Error {}

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
    if (!check) throw new ConfigError(`config ${path}: unknown key "${k}" (allowed: ${Object.keys(LEGACY_KEYS).join(', ')})`);
    const why = check(v);
    if (why) throw new ConfigError(`config ${path}: ${k}${why.startsWith('[') ? '' : ' '}${why}`);
  }
  return doc as ServerConfig;
}

/** Keys only Vault's format has: a JSON document with one of them is read as Vault's shape. */
const VAULT_ONLY_KEYS = new Set(['listener', 'backend', 'ha_storage', 'ha_backend', 'seal', 'kms', 'hsm', 'api_addr', 'cluster_addr', 'cluster_name', 'disable_mlock', 'ui', 'kms_library', 'disable_standby_reads', 'disable_clustering', 'disable_cache', 'default_lease_ttl', 'max_lease_ttl']);

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
  if (isObject(s) && Object.keys(s).length === 1 && ['file', 'inmem', 'postgresql'].includes(Object.keys(s)[0]!) && isObject(Object.values(s)[0])) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Vault's format (HCL or JSON), read from the syntax tree so every error names its line.

/** Where a value sits in a config file (errors name file, line and key). */
export class At {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly key: string,
  ) {}
  fail(why: string): never {
    throw new ConfigError(`config ${this.file}:${this.line}: ${this.key}: ${why}`);
  }
  child(item: HclItem | { key: string; line: number }): At {
    return new At(this.file, item.line, this.key ? `${this.key}.${item.key}` : item.key);
  }
}

function describeType(v: HclValue): string {
  return v.type === 'object' ? 'a block/object' : v.type === 'list' ? 'a list' : v.type === 'bool' ? 'a boolean' : v.type === 'number' ? 'a number' : v.type === 'null' ? 'null' : 'a string';
}

/** Weak boolean as Vault's config decoding (mapstructure): true/"true"/1/"1"/"t" ...; "" is false. */
function weakBool(v: HclValue, at: At): boolean {
  if (v.type === 'bool') return v.value;
  if (v.type === 'number') return v.value !== 0;
  if (v.type === 'string') {
    const s = v.value.trim();
    if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(s)) return true;
    if (['', '0', 'f', 'F', 'false', 'FALSE', 'False'].includes(s)) return false;
    at.fail(`must be a boolean (true or false), got "${v.value}"`);
  }
  at.fail(`must be a boolean, got ${describeType(v)}`);
}

function str(v: HclValue, at: At, opts: { nonEmpty?: boolean } = {}): string {
  if (v.type !== 'string') at.fail(`must be a string, got ${describeType(v)}`);
  if (opts.nonEmpty && v.value === '') at.fail('must not be empty');
  return v.value;
}

/** A positive integer given as a number or a numeric string (Vault's weak decoding). */
function positiveInt(v: HclValue, at: At, what = 'a positive integer'): number {
  const n = v.type === 'number' ? v.value : v.type === 'string' && /^\s*\d+\s*$/.test(v.value) ? Number(v.value) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) at.fail(`must be ${what}, got ${v.type === 'string' ? `"${v.value}"` : describeType(v)}`);
  return n;
}

/** Stanza value as a string, as Vault hands storage/seal parameters to backends (non-strings JSON-encoded). */
function stanzaString(v: HclValue, at: At): string {
  if (v.type === 'string') return v.value;
  if (v.type === 'bool' || v.type === 'number') return String(v.value);
  at.fail(`must be a string, number or boolean, got ${describeType(v)}`);
}

/** A stanza written either as a block `name "type" { ... }` or as an object `name = { type = { ... } }`. */
function stanzas(item: HclItem, at: At): Array<{ type: string; body: HclObject; at: At }> {
  if (item.value.type !== 'object') at.fail(`must be a block, as in ${item.key} "<type>" { ... }`);
  if (item.labels.length > 1) at.fail(`takes one label (the type), got ${item.labels.length}`);
  if (item.labels.length === 1) return [{ type: item.labels[0]!, body: item.value, at: new At(at.file, item.line, `${at.key}.${item.labels[0]}`) }];
  // JSON / object form: { "postgresql": { ... } } (a list of such objects for repeatable blocks).
  const out: Array<{ type: string; body: HclObject; at: At }> = [];
  for (const t of item.value.items) {
    const tat = at.child(t);
    const bodies = t.value.type === 'list' ? t.value.items : [t.value];
    for (const b of bodies) {
      if (b.type !== 'object') return tat.fail(`must be a block/object of parameters, got ${describeType(b)}`);
      out.push({ type: t.key, body: b, at: tat });
    }
  }
  if (out.length === 0) at.fail('needs a type, as in ' + `${item.key} "<type>" { ... }`);
  return out;
}

/** A JSON list of blocks (`"listener": [{"tcp": {...}}, ...]`) is the same as repeated blocks. */
function expandListItems(item: HclItem): HclItem[] {
  if (item.value.type !== 'list') return [item];
  return item.value.items.map((v) => ({ ...item, value: v, line: v.line }));
}

/** Parameters each storage backend accepts (unknown ones stop the server). */
const STORAGE_PARAMS: Record<StorageType, readonly string[]> = {
  file: ['path'],
  inmem: [],
  postgresql: [
    'connection_url',
    'table',
    'max_idle_connections',
    'max_parallel',
    'ha_enabled',
    'ha_table',
    'skip_create_table',
    'max_connect_retries',
    // keyhold: the HA lock's time to live (Vault's is fixed at 15 s); renewals run every third of it.
    'ha_lock_ttl',
  ],
};
/** Stanza keys Vault lifts out of the storage block into top-level settings. */
const LIFTED = ['redirect_addr', 'advertise_addr', 'cluster_addr', 'disable_clustering'];

/** A storage stanza (also `operator migrate`'s storage_source / storage_destination). */
export function storageStanza(item: HclItem, at: At, lifted: Record<string, { value: string; at: At }>): StorageConfig {
  const list = stanzas(item, at);
  if (list.length !== 1) at.fail('only one storage stanza is allowed');
  const { type, body, at: sat } = list[0]!;
  if (!(type in STORAGE_PARAMS)) sat.fail(`unknown storage type "${type}" (supported: ${Object.keys(STORAGE_PARAMS).join(', ')})`);
  const allowed = STORAGE_PARAMS[type as StorageType];
  const params: Record<string, string> = {};
  for (const p of body.items) {
    const pat = sat.child(p);
    if (LIFTED.includes(p.key)) {
      lifted[p.key] = { value: stanzaString(p.value, pat), at: pat };
      continue;
    }
    if (!allowed.includes(p.key)) pat.fail(`unknown key (allowed: ${[...allowed, ...LIFTED].join(', ')})`);
    if (p.key in params) pat.fail('given twice');
    params[p.key] = stanzaString(p.value, pat);
  }
  if (type === 'file' && !params.path) sat.fail('needs path = "<directory>"');
  return { type: type as StorageType, path: params.path, params };
}

const TCP_KEYS = ['address', 'cluster_address', 'tls_disable', 'tls_cert_file', 'tls_key_file', 'max_request_size', 'tls_min_version', 'tls_max_version', 'max_request_duration', 'telemetry', 'tls_require_and_verify_client_cert', 'tls_client_ca_file', 'tls_disable_client_certs'];
const UNIX_KEYS = ['address', 'socket_mode', 'socket_user', 'socket_group', 'max_request_size', 'telemetry'];

function listenerStanzas(item: HclItem, at: At): ListenerConfig[] {
  const out: ListenerConfig[] = [];
  for (const { type, body, at: lat } of stanzas(item, at)) {
    const t = type.toLowerCase();
    if (t !== 'tcp' && t !== 'unix') lat.fail(`unsupported listener type "${type}" (supported: tcp, unix)`);
    const allowed = t === 'tcp' ? TCP_KEYS : UNIX_KEYS;
    const v: Record<string, { value: HclValue; at: At }> = {};
    for (const p of body.items) {
      const pat = lat.child(p);
      if (!allowed.includes(p.key)) pat.fail(`unknown key (allowed: ${allowed.join(', ')})`);
      if (p.key in v) pat.fail('given twice');
      v[p.key] = { value: p.value, at: pat };
    }
    let maxRequestSize: number | undefined;
    if (v.max_request_size) {
      // Vault: 0 means the default; a negative size means unlimited (we cap at the largest safe size).
      const m = v.max_request_size;
      const n = m.value.type === 'number' ? m.value.value : m.value.type === 'string' && /^\s*-?\d+\s*$/.test(m.value.value) ? Number(m.value.value) : NaN;
      if (!Number.isSafeInteger(n)) m.at.fail(`must be an integer (bytes), got ${m.value.type === 'string' ? `"${m.value.value}"` : describeType(m.value)}`);
      maxRequestSize = n === 0 ? undefined : n < 0 ? Number.MAX_SAFE_INTEGER : n;
    }
    // telemetry hook (issue 27): `telemetry { unauthenticated_metrics_access = true }`.
    const metricsOpen = v.telemetry ? parseListenerTelemetry(v.telemetry.value, (k, why) => new At(lat.file, v.telemetry!.at.line, `${lat.key}.${k}`).fail(why)) : false;
    if (t === 'unix') {
      const path = v.address ? str(v.address.value, v.address.at, { nonEmpty: true }) : undefined;
      let mode: number | undefined;
      if (v.socket_mode) {
        const s = stanzaString(v.socket_mode.value, v.socket_mode.at);
        if (!/^[0-7]{3,4}$/.test(s)) v.socket_mode.at.fail(`must be an octal mode such as "660", got "${s}"`);
        mode = parseInt(s, 8);
      }
      if (v.socket_user || v.socket_group) (v.socket_user ?? v.socket_group)!.at.fail('is not supported (run the daemon as the socket owner)');
      out.push({ type: 'unix', path, ...(mode !== undefined ? { socket_mode: mode } : {}), ...(maxRequestSize !== undefined ? { max_request_size: maxRequestSize } : {}), ...(metricsOpen ? { unauthenticated_metrics_access: true } : {}) });
    } else {
      const address = v.address ? str(v.address.value, v.address.at) : '127.0.0.1:8200';
      if (!/^.+:\d+$/.test(address)) (v.address?.at ?? lat).fail(`must be "host:port", got "${address}"`);
      const tlsDisable = v.tls_disable ? weakBool(v.tls_disable.value, v.tls_disable.at) : false;
      const cert = v.tls_cert_file ? str(v.tls_cert_file.value, v.tls_cert_file.at, { nonEmpty: true }) : undefined;
      const key = v.tls_key_file ? str(v.tls_key_file.value, v.tls_key_file.at, { nonEmpty: true }) : undefined;
      if (!tlsDisable && (!cert || !key)) lat.fail('needs tls_cert_file and tls_key_file, or tls_disable = true');
      for (const k of ['cluster_address', 'tls_min_version', 'tls_max_version', 'max_request_duration']) if (v[k]) stanzaString(v[k].value, v[k].at);
      const clientCerts: ClientCertConfig = {};
      if (v.tls_require_and_verify_client_cert) clientCerts.tls_require_and_verify_client_cert = weakBool(v.tls_require_and_verify_client_cert.value, v.tls_require_and_verify_client_cert.at);
      if (v.tls_disable_client_certs) clientCerts.tls_disable_client_certs = weakBool(v.tls_disable_client_certs.value, v.tls_disable_client_certs.at);
      if (v.tls_client_ca_file) clientCerts.tls_client_ca_file = str(v.tls_client_ca_file.value, v.tls_client_ca_file.at, { nonEmpty: true });
      if (clientCerts.tls_require_and_verify_client_cert && clientCerts.tls_disable_client_certs) lat.fail('tls_require_and_verify_client_cert and tls_disable_client_certs exclude each other');
      if (clientCerts.tls_require_and_verify_client_cert && !clientCerts.tls_client_ca_file) lat.fail('tls_require_and_verify_client_cert needs tls_client_ca_file');
      if (tlsDisable && Object.keys(clientCerts).length) lat.fail('client certificate settings need TLS (tls_disable is set)');
      out.push({ type: 'tcp', address, ...(tlsDisable ? {} : { tls_cert: cert, tls_key: key, ...clientCerts }), ...(maxRequestSize !== undefined ? { max_request_size: maxRequestSize } : {}), ...(metricsOpen ? { unauthenticated_metrics_access: true } : {}) });
    }
  }
  return out;
}

function sealStanza(item: HclItem, at: At): Array<{ type: string; params: Record<string, unknown> }> {
  return stanzas(item, at).map((s) => sealParams(s));
}

function sealParams({ type, body, at: sat }: { type: string; body: HclObject; at: At }): { type: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = {};
  for (const p of body.items) {
    const pat = sat.child(p);
    if (p.key in params) pat.fail('given twice');
    // Vault converts seal parameters to strings (an HCL `true` arrives as "1"); keep HCL's value and
    // let the seal decide, but refuse shapes no seal takes.
    if (p.value.type === 'list' || p.value.type === 'object') return pat.fail(`must be a string, number or boolean, got ${describeType(p.value)}`);
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
const VAULT_KEYS: Record<string, (item: HclItem, at: At, cfg: ServerConfig, ctx: { lifted: Record<string, { value: string; at: At }> }) => void> = {
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
    if (all.length > 2) at.fail('at most two seal stanzas (the one in use and a disabled one being migrated away from)');
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
  log_level: (it, at, cfg) => {
    const s = str(it.value, at).toLowerCase();
    // Vault's levels: trace/debug/info/warn/error (also "warning", "err").
    const map: Record<string, LogLevel> = { trace: 'debug', debug: 'debug', info: 'info', warn: 'warn', warning: 'warn', error: 'error', err: 'error', off: 'off' };
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
  max_request_size: (it, at, cfg) => void (cfg.max_request_size = positiveInt(it.value, at, 'a positive integer (bytes)')),
  telemetry: (it, at, cfg) => void (cfg.telemetry = parseTelemetryStanza(it.value, (k, why) => new At(at.file, at.line, k).fail(why))),
};
const ALIASES: Record<string, string> = { backend: 'storage', ha_backend: 'ha_storage', kms: 'seal', hsm: 'seal' };

function url(v: HclValue, at: At): string {
  const s = str(v, at, { nonEmpty: true });
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    at.fail(`must be a URL with scheme, as in "https://node-a:8200"; got "${s}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') at.fail(`must be an http:// or https:// URL, got "${s}"`);
  return s.replace(/\/+$/, '');
}

/** Read Vault's format (HCL or JSON text) into ServerConfig; errors name file, line and key. */
export function parseVaultConfig(path: string, text: string): ServerConfig {
  let doc: HclObject;
  try {
    doc = parseHcl(text);
  } catch (e) {
    if (e instanceof HclSyntaxError) throw new ConfigError(`config ${path}:${e.line}: syntax error: ${e.reason} (column ${e.column})`);
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
    if (!read) throw new ConfigError(`config ${path}:${item.line}: ${item.key}: unknown key (allowed: ${Object.keys(VAULT_KEYS).join(', ')})`);
    const repeatable = name === 'listener' || name === 'kms_library';
    if (!repeatable && seen.has(name) && name !== 'storage' && name !== 'ha_storage' && name !== 'seal') at.fail('given twice');
    seen.add(name);
    read(item, at, cfg, ctx);
  }
  // Lifted storage keys act as top-level settings, which win (Vault's config.go).
  const l = ctx.lifted;
  const redirect = l.redirect_addr ?? l.advertise_addr;
  if (redirect && !cfg.api_addr) cfg.api_addr = url({ type: 'string', value: redirect.value, line: redirect.at.line, column: 1 }, redirect.at);
  if (l.cluster_addr && !cfg.cluster_addr) cfg.cluster_addr = url({ type: 'string', value: l.cluster_addr.value, line: l.cluster_addr.at.line, column: 1 }, l.cluster_addr.at);
  if (l.disable_clustering && cfg.disable_clustering === undefined) cfg.disable_clustering = weakBool({ type: 'string', value: l.disable_clustering.value, line: 0, column: 0 }, l.disable_clustering.at);
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
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) throw new ConfigError('--tls-cert and --tls-key go together');
  if (flags.maxRequestSize !== undefined && !(Number.isInteger(flags.maxRequestSize) && flags.maxRequestSize > 0)) {
    throw new ConfigError('--max-request-size must be a positive integer (bytes)');
  }
  for (const a of flags.listen ?? []) if (!/^.+:\d+$/.test(a)) throw new ConfigError(`--listen must be host:port, got "${a}"`);
  const specs: ListenerSpec[] = [];
  const fileListeners = file.listeners ?? [];
  const fileUnix = fileListeners.find((l) => l.type === 'unix') as { path?: string; max_request_size?: number; socket_mode?: number } | undefined;
  const socketPath = flags.socket ?? fileUnix?.path;
  const tcp: ListenerSpec[] = flags.listen?.length
    ? flags.listen.map((address) => ({ type: 'tcp' as const, address, tlsCert: flags.tlsCert, tlsKey: flags.tlsKey }))
    : fileListeners
        .filter((l) => l.type === 'tcp')
        .map((l) => {
          const t = l as { address: string; tls_cert?: string; tls_key?: string; max_request_size?: number } & ClientCertConfig;
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
  const wantsUnix = !flags.noSocket && (flags.socket !== undefined || fileUnix !== undefined || fileListeners.length === 0 || tcp.length === 0);
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
      ? { type: 'file', path: flags.storagePath ?? file.storage?.path ?? defaultStoragePath(env), ...(file.storage?.params ? { params: file.storage.params } : {}) }
      : { type: storageType, params: { ...(file.storage?.params ?? {}) } };
  // Vault: VAULT_API_ADDR / VAULT_CLUSTER_ADDR win over the file.
  const apiAddr = env.KEYHOLD_API_ADDR || env.VAULT_API_ADDR || file.api_addr;
  const clusterAddr = env.KEYHOLD_CLUSTER_ADDR || env.VAULT_CLUSTER_ADDR || file.cluster_addr;
  return {
    ...file,
    dev,
    dev_root_token: flags.devRootToken ?? file.dev_root_token,
    storage,
    ...(apiAddr ? { api_addr: apiAddr.replace(/\/+$/, '') } : {}),
    ...(clusterAddr ? { cluster_addr: clusterAddr } : {}),
    max_request_size: flags.maxRequestSize ?? file.max_request_size ?? 32 * 1024 * 1024,
    log_level: flags.logLevel ?? file.log_level ?? 'info',
    keychain: flags.keychain ?? file.keychain ?? 'os',
    listenerSpecs: specs,
    kmsLibraries: file.kmsLibraries ?? [],
  };
}
