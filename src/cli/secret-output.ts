/**
 * Printing a whole API answer as the vault CLI does (issue 34 items 1-2, both faces):
 * - `-format=json|yaml` prints the response envelope (request_id, lease_id, lease_duration, renewable,
 *   data, warnings, then auth, wrap_info, mount_type when present), so `jq -r .data.ciphertext` and
 *   `jq -r .auth.client_token` work;
 * - `-field=NAME` reads the fields of the `auth` block (token, token_accessor, token_policies, ...) and
 *   of `wrap_info` (wrapping_token, ...) as well as the data's;
 * - the table of the `vault` face lists lease, auth, wrap and data rows (keyhold's face keeps its own).
 * Written from the vault CLI's documented output (command/format.go, command/util.go RawField).
 */
import type { Face } from './face.js';
import { LocalError } from './errors.js';
import { table } from './table.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const ENVELOPE_KEYS = new Set([
  'request_id',
  'lease_id',
  'lease_duration',
  'renewable',
  'data',
  'warnings',
  'auth',
  'wrap_info',
  'mount_type',
]);

/**
 * An answer as an api.Secret: a raw answer (a sys/ endpoint answering its fields at the top level,
 * with no data, auth or wrap_info) has those fields as its data.
 */
export function asSecret(body: unknown): Obj {
  const b = isObj(body) ? body : {};
  if ('data' in b || isObj(b.auth) || isObj(b.wrap_info)) return b;
  const data = Object.fromEntries(Object.entries(b).filter(([k]) => !ENVELOPE_KEYS.has(k)));
  return Object.keys(data).length ? { ...b, data } : b;
}

/** The JSON the vault CLI prints for an answer: its api.Secret, field for field. */
export function envelope(body: unknown): Obj {
  const b = asSecret(body);
  const out: Obj = {
    request_id: b.request_id ?? '',
    lease_id: b.lease_id ?? '',
    lease_duration: b.lease_duration ?? 0,
    renewable: b.renewable ?? false,
    data: b.data ?? null,
    warnings: b.warnings ?? null,
  };
  if (isObj(b.auth)) out.auth = b.auth;
  if (isObj(b.wrap_info)) out.wrap_info = b.wrap_info;
  if (typeof b.mount_type === 'string' && b.mount_type) out.mount_type = b.mount_type;
  return out;
}

/** The token fields of an auth block, as `vault write auth/.../login` shows them. */
const AUTH_FIELDS: Record<string, string> = {
  token: 'client_token',
  token_accessor: 'accessor',
  token_duration: 'lease_duration',
  token_renewable: 'renewable',
  token_policies: 'token_policies',
  identity_policies: 'identity_policies',
  policies: 'policies',
};

const WRAP_FIELDS: Record<string, string> = {
  wrapping_token: 'token',
  wrapping_accessor: 'accessor',
  wrapping_token_ttl: 'ttl',
  wrapping_token_creation_time: 'creation_time',
  wrapping_token_creation_path: 'creation_path',
  wrapped_accessor: 'wrapped_accessor',
};

/** `-field=NAME` of an answer: an auth or wrap_info field, a top-level one, else the data's (dotted paths too). */
export function rawField(body: unknown, field: string): unknown {
  const b = asSecret(body);
  const data = isObj(b.data) ? b.data : {};
  if (isObj(b.auth) && field in AUTH_FIELDS)
    return b.auth[AUTH_FIELDS[field]!] ?? (field.endsWith('policies') ? [] : undefined);
  if (isObj(b.wrap_info) && field in WRAP_FIELDS) return b.wrap_info[WRAP_FIELDS[field]!];
  if (!isObj(b.auth) && !isObj(b.wrap_info)) {
    if (field === 'lease_duration' || field === 'refresh_interval') return b.lease_duration;
    if (field === 'lease_id' || field === 'request_id' || field === 'renewable') return b[field];
    if (field === 'data') return 'data' in data ? data.data : data;
  }
  if (field in data) return data[field];
  // keyhold's own: the auth block's keys by their API names (client_token, accessor, ...).
  if (isObj(b.auth) && field in b.auth) return b.auth[field];
  // keyhold's own: a dotted path into the data (`--field keys.1`).
  return field.split('.').reduce<unknown>((o, k) => (isObj(o) || Array.isArray(o) ? (o as Obj)[k] : undefined), data);
}

/** A value as Go's `%v` prints it (what the vault CLI shows in tables and for -field). */
export function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (isObj(v)) {
    const keys = Object.keys(v).sort();
    return `map[${keys.map((k) => `${k}:${goValue(v[k])}`).join(' ')}]`;
  }
  return String(v);
}

/** Seconds as Go's time.Duration prints them (3600 -> 1h0m0s is shortened as the vault CLI does: 1h). */
export function humanDuration(v: unknown): string {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isFinite(n)) return goValue(v);
  if (n === 0) return '0s';
  const h = Math.floor(n / 3600);
  const m = Math.floor((n % 3600) / 60);
  const s = n % 60;
  let out = '';
  if (h) out += `${h}h`;
  if (m) out += `${m}m`;
  if (s) out += `${s}s`;
  return out;
}

/** Keys the vault CLI shows as durations. */
export function looksLikeDuration(k: string): boolean {
  return (
    k === 'period' ||
    k.endsWith('_period') ||
    k === 'ttl' ||
    k.endsWith('_ttl') ||
    k === 'duration' ||
    k.endsWith('_duration') ||
    k === 'lease_max' ||
    k === 'ttl_max'
  );
}

/** The vault CLI's Key/Value table of an answer (lease, token, wrapping token, then data rows). */
export function secretTable(body: unknown): string {
  const b = asSecret(body);
  const rows: Array<[string, string]> = [];
  const lease = Number(b.lease_duration ?? 0);
  if (lease > 0) {
    if (b.lease_id)
      rows.push(
        ['lease_id', String(b.lease_id)],
        ['lease_duration', humanDuration(lease)],
        ['lease_renewable', String(Boolean(b.renewable))],
      );
    else rows.push(['refresh_interval', humanDuration(lease)]);
  }
  if (isObj(b.auth)) {
    const a = b.auth;
    const dur = Number(a.lease_duration ?? 0);
    rows.push(
      ['token', goValue(a.client_token ?? '')],
      ['token_accessor', goValue(a.accessor ?? '')],
      ['token_duration', dur === 0 ? '∞' : humanDuration(dur)],
      ['token_renewable', String(Boolean(a.renewable))],
    );
    const quoted = (v: unknown) => `[${(Array.isArray(v) ? v : []).map((p) => JSON.stringify(String(p))).join(' ')}]`;
    rows.push(
      ['token_policies', quoted(a.token_policies)],
      ['identity_policies', quoted(a.identity_policies)],
      ['policies', quoted(a.policies)],
    );
    for (const [k, v] of Object.entries(isObj(a.metadata) ? a.metadata : {}))
      rows.push([`token_meta_${k}`, goValue(v)]);
  }
  if (isObj(b.wrap_info)) {
    const w = b.wrap_info;
    rows.push(
      ['wrapping_token:', goValue(w.token)],
      ['wrapping_accessor:', goValue(w.accessor)],
      ['wrapping_token_ttl:', humanDuration(w.ttl)],
      ['wrapping_token_creation_time:', goValue(w.creation_time)],
      ['wrapping_token_creation_path:', goValue(w.creation_path)],
    );
    if (w.wrapped_accessor) rows.push(['wrapped_accessor:', goValue(w.wrapped_accessor)]);
  }
  const data = isObj(b.data) ? b.data : {};
  for (const k of Object.keys(data).sort())
    rows.push([k, looksLikeDuration(k) ? humanDuration(data[k]) : goValue(data[k])]);
  return rows.length ? rowsTable(rows) : '';
}

/** A Key/Value table of rows in the given order (the vault CLI's column layout). */
export function rowsTable(rows: ReadonlyArray<readonly [string, string]>): string {
  const w = Math.max(3, ...rows.map(([k]) => k.length));
  const lines = [`${'Key'.padEnd(w)}    Value`, `${'---'.padEnd(w)}    -----`];
  for (const [k, v] of rows) lines.push(`${k.padEnd(w)}    ${v}`.trimEnd());
  return lines.join('\n') + '\n';
}

/** What printing an answer needs. */
export interface SecretPrintOptions {
  face: Face;
  format?: string;
  field?: string;
  write(s: string): void;
  /** keyhold's face, for table and raw output: its own rendering (the data's table by default). */
  keyhold?: () => Promise<void>;
}

/** Print a whole answer per -field / -format (see the file comment). */
export async function printSecret(body: unknown, o: SecretPrintOptions): Promise<void> {
  if (o.field) {
    const v = rawField(body, o.field);
    if (v === undefined || v === null)
      throw new LocalError(
        o.face === 'vault'
          ? `Field "${o.field}" not present in secret`
          : `field "${o.field}" not present in the response`,
      );
    if (o.format === 'json') return o.write(JSON.stringify(v, null, 2) + '\n');
    o.write(typeof v === 'string' ? v : o.face === 'vault' ? goValue(v) : JSON.stringify(v));
    return;
  }
  const format = o.format ?? 'table';
  if (format === 'json') return o.write(JSON.stringify(envelope(body), null, 2) + '\n');
  if (format === 'yaml') {
    const { stringify } = await import('yaml');
    return o.write(stringify(envelope(body)));
  }
  if (format !== 'table' && format !== 'raw')
    throw new LocalError(`--format ${format} does not apply to this command (use table, json, yaml, raw)`);
  if (o.face === 'keyhold' && o.keyhold) return o.keyhold();
  if (format === 'raw') {
    const data = isObj(body) ? (body.data ?? body) : body;
    return o.write(typeof data === 'string' ? data : JSON.stringify(data));
  }
  if (o.face === 'vault') return o.write(secretTable(body));
  const data = isObj(body) ? (body.data ?? body.auth ?? {}) : {};
  o.write(isObj(data) ? table(data) : String(data) + '\n');
}
