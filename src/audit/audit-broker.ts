/**
 * The audit broker: the router's audit hook. It keeps the enabled audit devices (persisted behind the
 * barrier under `sys/audit/`, each with its own random salt), turns every request and response into
 * one JSON line per device with every string value of the data hashed (`hmac-sha256:<hex>`), and
 * fails closed: when no enabled device could record an entry, the request fails (Vault's rule: one
 * working device is enough).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { invalid, unavailable } from '../framework/errors.js';
import type { Clock, Logger, MountInfo, TokenInfo } from '../framework/context.js';
import type { Operation } from '../framework/route.js';
import type { LifecycleEvents } from '../framework/events.js';
import { getJSON, prefixed, putJSON, type Storage } from '../storage/backend.js';
import { hashStructure, hashValue } from './audit-hash.js';
import { DiscardSink, FileSink, StdoutSink, type AuditSink } from './file-device.js';
import { SocketSink, socketTargetOf } from './socket-device.js';
import { SyslogSink, normalizeSyslogOptions } from './syslog-device.js';

/** What the router tells the broker about a request (the router's AuditEntry). */
export interface AuditRequest {
  requestId: string;
  operation: Operation;
  path: string;
  remoteAddress: string;
  token: TokenInfo | null;
  data: Record<string, unknown>;
  sensitive: Set<string>;
  /** The request's headers (only those configured in sys/config/auditing/request-headers are logged). */
  headers?: Record<string, string | string[] | undefined>;
}

/** One audited request header (sys/config/auditing/request-headers/:header). */
export interface AuditedHeader {
  hmac: boolean;
}

/** A device as stored in the audit table (and shown by `sys/audit`). */
export interface AuditDeviceRecord {
  /** Path with a trailing slash, e.g. "file/". */
  path: string;
  type: string;
  description: string;
  options: Record<string, string>;
  local: boolean;
  uuid: string;
}

/** One device type: its options (name -> help) and how to build its sink. */
export interface DeviceType {
  description: string;
  options: Record<string, string>;
  /** Normalise and check options (throws invalid naming the option). */
  normalize(options: Record<string, string>): Record<string, string>;
  create(options: Record<string, string>): AuditSink;
}

const COMMON_OPTIONS: Record<string, string> = {
  hmac_accessor: 'Hash token accessors too (default true)',
  elide_list_responses: 'Log the count of list keys instead of the keys (default false)',
  format: 'Entry format: json (the only format)',
  prefix: 'Text written before each JSON line',
  log_raw: 'Not supported: keyhold never writes unhashed values',
};

function boolOption(options: Record<string, string>, name: string, dflt: boolean): boolean {
  const v = options[name];
  if (v === undefined || v === '') return dflt;
  if (/^(true|1|t|yes)$/i.test(v)) return true;
  if (/^(false|0|f|no)$/i.test(v)) return false;
  throw invalid(`options.${name}`, `must be a boolean, got "${v}"`);
}

function normalizeCommon(options: Record<string, string>): void {
  boolOption(options, 'hmac_accessor', true);
  boolOption(options, 'elide_list_responses', false);
  if (boolOption(options, 'log_raw', false))
    throw invalid('options.log_raw', 'is not supported: audit entries always hash sensitive values');
  if (options.format !== undefined && options.format !== '' && options.format !== 'json')
    throw invalid('options.format', `must be "json", got "${options.format}"`);
}

/** Audit device types (Vault's `file`; `file_path` may be `stdout` or `discard` as in Vault). */
export const AUDIT_DEVICE_TYPES: Record<string, DeviceType> = {
  file: {
    description: 'Append JSON lines to a file',
    options: {
      ...COMMON_OPTIONS,
      file_path: 'Absolute path of the log file, or "stdout", or "discard" (alias: path)',
      mode: 'File mode in octal (default 0600; "0000" leaves an existing file alone)',
    },
    normalize(options) {
      const out = { ...options };
      if (out.file_path === undefined && out.path !== undefined) out.file_path = out.path;
      delete out.path;
      const fp = out.file_path;
      if (!fp) throw invalid('options.file_path', 'is required');
      if (fp !== 'stdout' && fp !== 'discard' && !fp.startsWith('/'))
        throw invalid('options.file_path', 'must be an absolute path, "stdout" or "discard"');
      if (fp.includes('\0')) throw invalid('options.file_path', 'must not contain NUL');
      if (out.mode !== undefined && !/^0?[0-7]{3}$/.test(out.mode))
        throw invalid('options.mode', `must be an octal file mode such as 0600, got "${out.mode}"`);
      normalizeCommon(out);
      return out;
    },
    create(options) {
      const fp = options.file_path!;
      if (fp === 'stdout') return new StdoutSink();
      if (fp === 'discard') return new DiscardSink();
      const mode = options.mode === undefined ? 0o600 : parseInt(options.mode, 8);
      return new FileSink(fp, mode === 0 ? null : mode);
    },
  },
  // share (issue 28): Vault's socket and syslog devices.
  socket: {
    description: 'Send JSON lines to a TCP, UDP or Unix socket',
    options: {
      ...COMMON_OPTIONS,
      address: 'host:port (tcp, udp) or socket path (unix)',
      socket_type: 'tcp (default), udp or unix',
      write_timeout: 'How long one entry may take to send (default 2s); then the device has failed for that entry',
    },
    normalize(options) {
      const out = { ...options };
      socketTargetOf(out);
      normalizeCommon(out);
      return out;
    },
    create: (options) => new SocketSink(socketTargetOf(options)),
  },
  syslog: {
    description: 'Send entries to a syslog daemon (severity info)',
    options: {
      ...COMMON_OPTIONS,
      facility: 'Syslog facility (default AUTH; LOCAL0..LOCAL7, DAEMON, ...)',
      tag: 'Program name in each message (default keyhold)',
      address: 'udp://host:port (default udp://127.0.0.1:514) or tcp://host:port of the syslog daemon',
      write_timeout: 'How long one entry may take to send (default 2s)',
    },
    normalize(options) {
      const out = normalizeSyslogOptions(options);
      normalizeCommon(out);
      return out;
    },
    create: (options) => new SyslogSink(options),
  },
};

/**
 * Unauthenticated endpoints Vault serves outside its audited request path (raw HTTP handlers). The
 * rekey routes carry key shares both ways, as init and unseal do: not even their HMACs reach a device.
 */
const UNAUDITED = new Set([
  'sys/health',
  'sys/seal-status',
  'sys/leader',
  'sys/init',
  'sys/unseal',
  ...['rekey', 'rekey-recovery-key'].flatMap((p) => [`sys/${p}/init`, `sys/${p}/update`, `sys/${p}/verify`]),
]);

/** Auth-block keys that name policies or flags rather than secrets; everything else is hashed. */
const AUTH_CLEAR = new Set([
  'policies',
  'token_policies',
  'identity_policies',
  'token_type',
  'display_name',
  'entity_id',
  'orphan',
  'renewable',
  'lease_duration',
  'num_uses',
  'mfa_requirement',
]);

interface LiveDevice {
  record: AuditDeviceRecord;
  salt: Buffer;
  sink: AuditSink;
  hmacAccessor: boolean;
  elideLists: boolean;
  prefix: string;
}

/** What the broker needs from the core. */
export interface AuditDeps {
  /** Barrier storage scoped to `sys/audit/`. */
  storage: Storage;
  clock: Clock;
  logger: Logger;
  /** The mount serving a logical path (for mount_type/mount_accessor), if any. */
  mountOf(path: string): MountInfo | undefined;
}

const TABLE = 'table';
/** Storage key of the audited request headers. */
const HEADERS_KEY = 'request-headers';

/** Normalise a device path: "file", "/file/" -> "file/". */
export function normalizeDevicePath(p: string): string {
  const s = p.replace(/^\/+/, '').replace(/\/+$/, '');
  if (
    s === '' ||
    s.split('/').some((seg) => seg === '' || seg === '.' || seg === '..') ||
    !/^[\w.\-/]+$/.test(s) ||
    s.length > 128
  ) {
    throw invalid('path', `invalid audit device path "${p}"`);
  }
  return s + '/';
}

/** The audit hook: enabled devices, hashing, fan-out, fail-closed. */
export class AuditBroker {
  private devices = new Map<string, LiveDevice>();
  private readonly tokenHashes = new WeakMap<AuditRequest, Map<LiveDevice, { token: string; accessor: string }>>();

  constructor(private readonly deps: AuditDeps) {}

  /** Whether any device is enabled (the router skips auditing otherwise). */
  enabled(): boolean {
    return this.devices.size > 0;
  }

  /** Request headers audit entries carry (lower-case name -> whether the value is HMACed). */
  private headers = new Map<string, AuditedHeader>();

  /** Open the devices of the stored audit table (after unseal). A device that cannot open now fails its writes later. */
  async load(): Promise<void> {
    await this.unload();
    this.headers = new Map(
      Object.entries((await getJSON<Record<string, AuditedHeader>>(this.deps.storage, HEADERS_KEY)) ?? {}),
    );
    const table = (await getJSON<AuditDeviceRecord[]>(this.deps.storage, TABLE)) ?? [];
    for (const record of table) {
      const type = AUDIT_DEVICE_TYPES[record.type];
      if (!type) {
        this.deps.logger.error('unknown audit device type in audit table', { path: record.path, type: record.type });
        continue;
      }
      let salt = await this.deps.storage.get(`salt/${record.uuid}`);
      if (!salt) {
        salt = randomBytes(32);
        await this.deps.storage.put(`salt/${record.uuid}`, salt);
      }
      const sink = type.create(record.options);
      try {
        await sink.open();
      } catch (e) {
        this.deps.logger.error('audit device could not open; requests fail until it can write', {
          path: record.path,
          code: (e as NodeJS.ErrnoException).code,
        });
      }
      this.devices.set(record.path, live(record, salt, sink));
    }
  }

  /** Close every device and forget salts (before seal). */
  async unload(): Promise<void> {
    const devs = [...this.devices.values()];
    this.devices.clear();
    for (const d of devs) {
      await d.sink.close();
      d.salt.fill(0);
    }
  }

  /** Enable a device at `path`; its sink must open now. */
  async enable(
    path: string,
    input: { type: string; description?: string; options?: Record<string, string>; local?: boolean },
  ): Promise<AuditDeviceRecord> {
    const p = normalizeDevicePath(path);
    for (const existing of this.devices.keys()) {
      if (existing === p || existing.startsWith(p) || p.startsWith(existing))
        throw invalid('path', `path already in use at ${existing}`);
    }
    const type = AUDIT_DEVICE_TYPES[input.type];
    if (!type)
      throw invalid(
        'type',
        `unknown audit device type "${input.type}"; supported: ${Object.keys(AUDIT_DEVICE_TYPES).join(', ')}`,
      );
    const options = type.normalize(
      Object.fromEntries(Object.entries(input.options ?? {}).map(([k, v]) => [k, String(v)])),
    );
    const sink = type.create(options);
    try {
      await sink.open();
    } catch (e) {
      throw invalid(
        input.type === 'file' ? 'options.file_path' : 'options.address',
        `cannot open${input.type === 'file' ? ' for appending' : ''}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
    const record: AuditDeviceRecord = {
      path: p,
      type: input.type,
      description: input.description ?? '',
      options,
      local: input.local ?? false,
      uuid: randomUUID(),
    };
    const salt = randomBytes(32);
    try {
      await this.deps.storage.put(`salt/${record.uuid}`, salt);
      const table = [...[...this.devices.values()].map((d) => d.record), record];
      await putJSON(this.deps.storage, TABLE, table);
    } catch (e) {
      await sink.close();
      throw e;
    }
    this.devices.set(p, live(record, salt, sink));
    return record;
  }

  /** Disable the device at `path` (absent: no error, as Vault). */
  async disable(path: string): Promise<void> {
    const p = normalizeDevicePath(path);
    const d = this.devices.get(p);
    if (!d) return;
    await putJSON(
      this.deps.storage,
      TABLE,
      [...this.devices.values()].filter((x) => x !== d).map((x) => x.record),
    );
    this.devices.delete(p);
    await d.sink.close();
    await this.deps.storage.delete(`salt/${d.record.uuid}`);
    d.salt.fill(0);
  }

  /** The audited request headers (sys/config/auditing/request-headers). */
  auditedHeaders(): Record<string, AuditedHeader> {
    return Object.fromEntries([...this.headers.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** Audit a request header (lower-cased, as Vault keys them), its value HMACed when `hmac`. */
  async setAuditedHeader(name: string, hmac: boolean): Promise<void> {
    const next = new Map(this.headers).set(name.toLowerCase(), { hmac });
    await putJSON(this.deps.storage, HEADERS_KEY, Object.fromEntries(next));
    this.headers = next;
  }

  /** Stop auditing a request header. */
  async deleteAuditedHeader(name: string): Promise<void> {
    const next = new Map(this.headers);
    next.delete(name.toLowerCase());
    await putJSON(this.deps.storage, HEADERS_KEY, Object.fromEntries(next));
    this.headers = next;
  }

  /** Enabled devices, keyed by path (sys/audit). */
  list(): Record<string, Omit<AuditDeviceRecord, 'uuid'>> {
    const out: Record<string, Omit<AuditDeviceRecord, 'uuid'>> = {};
    for (const [p, d] of [...this.devices.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      const { uuid: _uuid, ...view } = d.record;
      out[p] = view;
    }
    return out;
  }

  /** The hash of `input` as device `path` logs it (sys/audit-hash). */
  hash(path: string, input: string): string {
    const key = normalizeDevicePath(path);
    const d = this.devices.get(key);
    // Vault's wording and status (AuditBroker.GetHash: `unknown audit backend %q` of the sanitized
    // path, returned as a 400 error response); hvac's test matches on "unknown audit backend".
    if (!d) throw invalid(`unknown audit backend ${JSON.stringify(key)}`);
    return hashValue(d.salt, input);
  }

  /** Reopen every file (log rotation). */
  async reopen(): Promise<void> {
    for (const d of this.devices.values()) {
      try {
        await d.sink.reopen();
      } catch (e) {
        this.deps.logger.error('audit device could not reopen', {
          path: d.record.path,
          code: (e as NodeJS.ErrnoException).code,
        });
      }
    }
  }

  /** Record a request before its handler runs; throws (fail closed) when no device could. */
  async request(entry: AuditRequest): Promise<void> {
    if (UNAUDITED.has(entry.path)) return;
    await this.fanOut((d) => this.entryFor(d, 'request', entry));
  }

  /** Record the response (or error) of a request; throws (fail closed) when no device could. */
  async response(entry: AuditRequest, status: number, body: unknown): Promise<void> {
    if (UNAUDITED.has(entry.path)) return;
    await this.fanOut((d) => this.entryFor(d, 'response', entry, status, body));
  }

  private async fanOut(build: (d: LiveDevice) => Record<string, unknown>): Promise<void> {
    const devs = [...this.devices.values()];
    if (devs.length === 0) return;
    const results = await Promise.allSettled(devs.map((d) => d.sink.write(d.prefix + JSON.stringify(build(d)) + '\n')));
    let ok = 0;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') ok++;
      else
        this.deps.logger.error('audit device failed to write', {
          path: devs[i]!.record.path,
          code: (r.reason as NodeJS.ErrnoException)?.code ?? 'error',
        });
    });
    if (ok === 0) throw unavailable('audit: no enabled audit device could record the request; refusing to serve it');
  }

  /** The configured request headers present on a request, as Vault logs them: name -> list of values. */
  private headersOf(
    headers: Record<string, string | string[] | undefined>,
    d: LiveDevice,
  ): Record<string, string[]> | undefined {
    let out: Record<string, string[]> | undefined;
    for (const [name, conf] of this.headers) {
      const v = headers[name];
      if (v === undefined) continue;
      const values = Array.isArray(v) ? v : [v];
      (out ??= {})[name] = conf.hmac ? values.map((x) => hashValue(d.salt, x)) : values;
    }
    return out;
  }

  private entryFor(
    d: LiveDevice,
    type: 'request' | 'response',
    e: AuditRequest,
    status?: number,
    body?: unknown,
  ): Record<string, unknown> {
    const h = (s: string) => hashValue(d.salt, s);
    const mount = this.deps.mountOf(e.path);
    const token = e.token;
    // The token's hashes are the same in the request and response entries: compute them once.
    let perDevice = this.tokenHashes.get(e);
    if (!perDevice) this.tokenHashes.set(e, (perDevice = new Map()));
    let th = perDevice.get(d);
    if (!th && token)
      perDevice.set(d, (th = { token: h(token.id), accessor: d.hmacAccessor ? h(token.accessor) : token.accessor }));
    const accessor = th?.accessor;
    const sensitive = new Set([...e.sensitive, 'data']);
    const out: Record<string, unknown> = {
      time: new Date(this.deps.clock.now()).toISOString(),
      type,
      auth: token
        ? {
            client_token: th!.token,
            accessor,
            display_name: token.displayName,
            policies: token.policies,
            token_policies: token.policies,
            token_type: token.batch ? 'batch' : 'service',
          }
        : undefined,
      request: {
        id: e.requestId,
        operation: e.operation,
        mount_type: mount?.type,
        mount_accessor: mount?.accessor,
        client_token: th?.token,
        client_token_accessor: accessor,
        namespace: { id: 'root' },
        path: e.path,
        data: Object.keys(e.data).length
          ? hashData(e.data, d.salt, sensitive, mount?.config.audit_non_hmac_request_keys)
          : undefined,
        headers: this.headers.size && e.headers ? this.headersOf(e.headers, d) : undefined,
        remote_address: e.remoteAddress,
      },
    };
    if (type === 'response') {
      const response: Record<string, unknown> = { mount_type: mount?.type, mount_accessor: mount?.accessor, status };
      const b = (body ?? null) as { errors?: unknown; data?: unknown; auth?: unknown } | null;
      if (b && Array.isArray(b.errors)) out.error = b.errors.map(String).join('; ');
      else if (b) {
        let data = b.data;
        if (
          d.elideLists &&
          e.operation === 'list' &&
          data &&
          typeof data === 'object' &&
          Array.isArray((data as Record<string, unknown>).keys)
        ) {
          data = {
            ...(data as Record<string, unknown>),
            keys: ((data as Record<string, unknown>).keys as unknown[]).length,
          };
        }
        if (data !== null && data !== undefined)
          response.data = hashData(data, d.salt, sensitive, mount?.config.audit_non_hmac_response_keys);
        if (b.auth && typeof b.auth === 'object') response.auth = hashAuth(b.auth as Record<string, unknown>, d);
        const wrap = (b as { wrap_info?: unknown }).wrap_info;
        if (wrap && typeof wrap === 'object') response.wrap_info = hashWrapInfo(wrap as Record<string, unknown>, d);
      }
      out.response = response;
    }
    return out;
  }
}

/**
 * Request or response data hashed, except the top-level keys the mount's tune lists in
 * audit_non_hmac_request_keys / audit_non_hmac_response_keys, which are logged as sent (Vault's
 * rule: the operator chose to see them).
 */
function hashData(data: unknown, salt: Buffer, sensitive: ReadonlySet<string>, clearKeys: unknown): unknown {
  const hashed = hashStructure(data, salt, sensitive);
  if (!Array.isArray(clearKeys) || clearKeys.length === 0 || !data || typeof data !== 'object' || Array.isArray(data))
    return hashed;
  const src = data as Record<string, unknown>;
  const out = hashed as Record<string, unknown>;
  for (const k of clearKeys) if (typeof k === 'string' && Object.hasOwn(src, k)) out[k] = src[k];
  return out;
}

/** A wrapped answer's wrap_info as Vault audits it: the wrapping token HMAC'd, accessors as configured. */
function hashWrapInfo(w: Record<string, unknown>, d: LiveDevice): Record<string, unknown> {
  const out: Record<string, unknown> = { ...w };
  if (typeof w.token === 'string' && w.token !== '') out.token = hashStructure(w.token, d.salt, new Set(['token']));
  for (const k of ['accessor', 'wrapped_accessor']) {
    if (d.hmacAccessor && typeof w[k] === 'string' && w[k] !== '') out[k] = hashStructure(w[k], d.salt, new Set([k]));
  }
  return out;
}

function hashAuth(auth: Record<string, unknown>, d: LiveDevice): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(auth)) {
    if (AUTH_CLEAR.has(k) || (k === 'accessor' && !d.hmacAccessor)) out[k] = v;
    else out[k] = hashStructure(v, d.salt, new Set([k]));
  }
  return out;
}

function live(record: AuditDeviceRecord, salt: Buffer, sink: AuditSink): LiveDevice {
  return {
    record,
    salt,
    sink,
    hmacAccessor: !/^(false|0|f|no)$/i.test(record.options.hmac_accessor ?? ''),
    elideLists: /^(true|1|t|yes)$/i.test(record.options.elide_list_responses ?? ''),
    prefix: record.options.prefix ?? '',
  };
}

/** What `attachAudit` needs from the core. */
export interface AuditHost {
  readonly barrier: Storage;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Lifecycle events: devices load after unseal and close before seal. */
  readonly events: Pick<LifecycleEvents, 'on'>;
  resolve(path: string): { mount: MountInfo } | null;
}

/** Build the broker for a core: devices load after unseal and close before seal. Assign the result to `core.audit`. */
export function attachAudit(core: AuditHost): AuditBroker {
  const broker = new AuditBroker({
    storage: prefixed(core.barrier, 'sys/audit/'),
    clock: core.clock,
    logger: core.logger,
    mountOf: (p) => core.resolve(p)?.mount,
  });
  core.events.on('after-unseal', () => broker.load());
  core.events.on('before-seal', () => broker.unload());
  return broker;
}

/** The broker attached to a core-like object, if any. */
export function auditBrokerOf(core: unknown): AuditBroker | undefined {
  const a = (core as { audit?: unknown } | null)?.audit;
  return a instanceof AuditBroker ? a : undefined;
}
