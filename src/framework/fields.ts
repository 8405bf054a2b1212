/**
 * Field kinds of route declarations, with Vault-lenient coercion
 * (hashicorp/vault sdk/framework/field_data.go: bools and ints accept strings, durations accept "1h").
 */
import { invalid } from './errors.js';

/** The kinds a field can have; each has a coercion below. */
export type FieldKind =
  | 'string'
  | 'int'
  | 'bool'
  | 'duration'
  | 'strings'
  | 'ints'
  | 'map'
  | 'stringMap'
  | 'list'
  | 'any'
  | 'base64';

/** Static description of a field, read by router, CLI, docs. */
export interface FieldSpec {
  kind: FieldKind;
  help: string;
  default?: unknown;
  required?: boolean;
  sensitive?: boolean;
  choices?: readonly string[];
  min?: number;
  max?: number;
  /** Field shown in the CLI under another flag name. */
  cliName?: string;
}

/** A declared field; `T` is the coerced type, `R` whether a value is always present. */
export class Field<T, R extends boolean = false> {
  declare readonly _type: T;
  declare readonly _present: R;
  constructor(readonly spec: FieldSpec) {}
  /** Value used when the request omits the field. */
  default(value: T): Field<T, true> {
    return new Field<T, true>({ ...this.spec, default: value });
  }
  /** The request must carry the field. */
  required(): Field<T, true> {
    return new Field<T, true>({ ...this.spec, required: true });
  }
  /** The value is secret: HMAC'd in audit logs, never echoed. */
  sensitive(): Field<T, R> {
    return new Field<T, R>({ ...this.spec, sensitive: true });
  }
  /** Allowed values (string kinds). */
  oneOf(...choices: string[]): Field<T, R> {
    return new Field<T, R>({ ...this.spec, choices });
  }
  /** Lower bound (ints, durations, lengths of strings and lists). */
  min(n: number): Field<T, R> {
    return new Field<T, R>({ ...this.spec, min: n });
  }
  /** Upper bound (ints, durations, lengths of strings and lists). */
  max(n: number): Field<T, R> {
    return new Field<T, R>({ ...this.spec, max: n });
  }
  /** Coerce a raw request value; throws a 400 naming the field. */
  coerce(name: string, raw: unknown): T | undefined {
    if (raw === undefined || raw === null) {
      if (this.spec.default !== undefined) return cloneDefault(this.spec.default) as T;
      if (this.spec.required) throw invalid(name, 'is required');
      return undefined;
    }
    const v = coerceKind(this.spec.kind, name, raw);
    checkBounds(name, this.spec, v);
    return v as T;
  }
}

function cloneDefault(v: unknown): unknown {
  if (Array.isArray(v)) return [...v];
  if (v && typeof v === 'object' && !Buffer.isBuffer(v)) return { ...(v as object) };
  return v;
}

function checkBounds(name: string, spec: FieldSpec, v: unknown): void {
  if (spec.choices && typeof v === 'string' && !spec.choices.includes(v)) {
    throw invalid(
      name,
      `must be one of ${spec.choices.join(', ')}, got "${v.length > 64 ? v.slice(0, 64) + '...' : v}"`,
    );
  }
  const size = typeof v === 'number' ? v : typeof v === 'string' || Array.isArray(v) ? v.length : undefined;
  if (size === undefined) return;
  const what = typeof v === 'number' ? '' : ' in length';
  if (spec.min !== undefined && size < spec.min)
    throw invalid(name, `must be at least ${spec.min}${what}, got ${size}`);
  if (spec.max !== undefined && size > spec.max) throw invalid(name, `must be at most ${spec.max}${what}, got ${size}`);
}

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False', '']);

/** Parse a Go-style bool (strconv.ParseBool). */
export function parseBool(name: string, raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'number' && (raw === 0 || raw === 1)) return raw === 1;
  if (typeof raw === 'string') {
    if (TRUE.has(raw)) return true;
    if (FALSE.has(raw)) return false;
  }
  throw invalid(name, `expected a boolean, got ${describe(raw)}`);
}

/** Parse an integer from a number or a numeric string. */
export function parseInt64(name: string, raw: unknown): number {
  if (typeof raw === 'number' && Number.isInteger(raw)) return raw;
  if (typeof raw === 'string' && /^[+-]?\d{1,16}$/.test(raw.trim())) return Number(raw.trim());
  throw invalid(name, `expected an integer, got ${describe(raw)}`);
}

const DURATION_UNITS: Record<string, number> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
  d: 86400,
};

/** Parse a duration to whole seconds: integer seconds, "3600", "1h", "90m", "1h30m", "7d" (Vault parseutil). */
export function parseDuration(name: string, raw: unknown): number {
  if (typeof raw === 'number' && Number.isFinite(raw) && raw >= 0) return Math.floor(raw);
  if (typeof raw === 'string') {
    const s = raw.trim();
    if (s === '') return 0;
    if (/^\d+$/.test(s)) return Number(s);
    const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/y;
    let total = 0;
    let pos = 0;
    while (pos < s.length) {
      re.lastIndex = pos;
      const m = re.exec(s);
      if (!m) break;
      total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
      pos = re.lastIndex;
    }
    if (pos === s.length && pos > 0) return Math.floor(total);
  }
  throw invalid(name, `expected a duration such as "1h" or seconds, got ${describe(raw)}`);
}

/** Format seconds the way Go's time.Duration prints (e.g. "1h0m0s", "0s"). */
export function formatDuration(seconds: number): string {
  if (seconds === 0) return '0s';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/** Decode standard or URL-safe base64, strictly; throws 400 naming the field. */
export function decodeBase64(name: string, value: string): Buffer {
  const s = value.replace(/[\r\n]/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(s) || s.replace(/=+$/, '').length % 4 === 1) {
    throw invalid(name, 'must be valid base64');
  }
  return Buffer.from(s, s.includes('-') || s.includes('_') ? 'base64url' : 'base64');
}

function describe(raw: unknown): string {
  // Never echo the value: a secret sent in the wrong field (or a KV value of the wrong shape) would
  // otherwise land in the error, the audit log and the client's logs.
  if (typeof raw === 'string') return `a string of ${raw.length} characters`;
  if (Array.isArray(raw)) return 'an array';
  if (raw === null) return 'null';
  return typeof raw === 'object' ? 'an object' : String(raw);
}

function coerceKind(kind: FieldKind, name: string, raw: unknown): unknown {
  switch (kind) {
    case 'string':
      if (typeof raw === 'string') return raw;
      if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
      throw invalid(name, `expected a string, got ${describe(raw)}`);
    case 'int':
      return parseInt64(name, raw);
    case 'bool':
      return parseBool(name, raw);
    case 'duration':
      return parseDuration(name, raw);
    case 'strings':
      if (typeof raw === 'string') return raw === '' ? [] : raw.split(',').map((s) => s.trim());
      if (Array.isArray(raw) && raw.every((x) => typeof x === 'string' || typeof x === 'number'))
        return raw.map(String);
      throw invalid(name, `expected a list of strings, got ${describe(raw)}`);
    case 'ints':
      if (typeof raw === 'string')
        return raw === '' ? [] : raw.split(',').map((s, i) => parseInt64(`${name}[${i}]`, s));
      if (typeof raw === 'number') return [parseInt64(name, raw)];
      if (Array.isArray(raw)) return raw.map((x, i) => parseInt64(`${name}[${i}]`, x));
      throw invalid(name, `expected a list of integers, got ${describe(raw)}`);
    case 'map':
      if (raw && typeof raw === 'object' && !Array.isArray(raw)) return raw;
      if (typeof raw === 'string' && raw.trim().startsWith('{')) {
        try {
          const v = JSON.parse(raw);
          if (v && typeof v === 'object' && !Array.isArray(v)) return v;
        } catch {
          /* fall through to the error below */
        }
      }
      throw invalid(name, `expected an object, got ${describe(raw)}`);
    case 'stringMap': {
      const m = coerceKind('map', name, raw) as Record<string, unknown>;
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(m)) {
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
          throw invalid(`${name}.${k}`, `expected a string, got ${describe(v)}`);
        }
        out[k] = String(v);
      }
      return out;
    }
    case 'list':
      if (Array.isArray(raw)) return raw;
      if (typeof raw === 'string' && raw.trim().startsWith('[')) {
        try {
          const v = JSON.parse(raw);
          if (Array.isArray(v)) return v;
        } catch {
          /* fall through */
        }
      }
      throw invalid(name, `expected a list, got ${describe(raw)}`);
    case 'base64':
      if (typeof raw !== 'string') throw invalid(name, `expected a base64 string, got ${describe(raw)}`);
      return decodeBase64(name, raw);
    case 'any':
      return raw;
  }
}

/** Field constructors: `f.string('help')`, `f.int('help').default(0)`, ... */
export const f = {
  string: (help: string) => new Field<string>({ kind: 'string', help }),
  /** A name segment (key name, destination name). */
  name: (help: string) => new Field<string, true>({ kind: 'string', help, required: true }),
  int: (help: string) => new Field<number>({ kind: 'int', help }),
  bool: (help: string) => new Field<boolean>({ kind: 'bool', help }),
  duration: (help: string) => new Field<number>({ kind: 'duration', help }),
  strings: (help: string) => new Field<string[]>({ kind: 'strings', help }),
  ints: (help: string) => new Field<number[]>({ kind: 'ints', help }),
  map: (help: string) => new Field<Record<string, unknown>>({ kind: 'map', help }),
  stringMap: (help: string) => new Field<Record<string, string>>({ kind: 'stringMap', help }),
  list: (help: string) => new Field<unknown[]>({ kind: 'list', help }),
  any: (help: string) => new Field<unknown>({ kind: 'any', help }),
  base64: (help: string) => new Field<Buffer>({ kind: 'base64', help }),
};

/** A map of declared fields. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Fields = Record<string, Field<any, boolean>>;

/** The coerced data type of a field map. */
export type Infer<F extends Fields> = {
  [K in keyof F]: F[K] extends Field<infer T, infer R> ? (R extends true ? T : T | undefined) : never;
};

// Route field maps are static: list each one's entries once, not on every request.
const fieldEntries = new WeakMap<Fields, Array<[string, Field<unknown, boolean>]>>();

/** Coerce every declared field from raw data; returns the data and the names of unknown fields. */
export function coerceFields<F extends Fields>(
  fields: F,
  raw: Record<string, unknown>,
): { data: Infer<F>; unknown: string[] } {
  const data: Record<string, unknown> = {};
  let entries = fieldEntries.get(fields);
  if (!entries) fieldEntries.set(fields, (entries = Object.entries(fields)));
  for (let i = 0; i < entries.length; i++) {
    const [name, field] = entries[i]!;
    data[name] = field.coerce(name, Object.hasOwn(raw, name) ? raw[name] : undefined);
  }
  const unknown: string[] = [];
  for (const k of Object.keys(raw)) if (!Object.hasOwn(fields, k)) unknown.push(k);
  return { data: data as Infer<F>, unknown };
}
