/**
 * The values templates work on, and how Go prints them. Data decoded from JSON is what Go's
 * encoding/json gives a template: objects are `map[string]interface {}` (plain objects here),
 * arrays `[]interface {}`, numbers float64 (JS numbers), strings, bools and nil (null). Integer
 * constants of the template and `len` results are Go ints (bigint here). `undefined` is Go's
 * invalid value: a missing map key, printed `<no value>`. A `GoStruct` stands for a struct such as
 * consul-template's `*dependency.Secret` (fields by exact name).
 */

export class GoStruct {
  constructor(
    readonly typeName: string,
    readonly fields: Record<string, unknown>,
  ) {}
}

/** Lists that are Go `[]string` (what `split` makes), as opposed to JSON's `[]interface {}`. */
const STRING_SLICES = new WeakSet<unknown[]>();
export function stringSlice(a: string[]): string[] {
  STRING_SLICES.add(a);
  return a;
}
export function isStringSlice(v: unknown): v is string[] {
  return Array.isArray(v) && STRING_SLICES.has(v);
}

export function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof GoStruct);
}

/** Go's type name of a value, for error messages (`map[string]interface {}`, `float64`). */
export function goType(v: unknown): string {
  if (v === undefined || v === null) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'float64';
  if (Array.isArray(v)) return STRING_SLICES.has(v) ? '[]string' : '[]interface {}';
  if (v instanceof GoStruct) return v.typeName;
  return 'map[string]interface {}';
}

/** A float64 as Go's %v prints it (strconv 'g' with the shortest digits: 1e+06, 0.0001, 1.5e-05). */
export function goFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const [mant, e] = f.toExponential().split('e') as [string, string];
  const exp = Number(e);
  // Exponent form below 1e-4 and from 1e6 (the shortest form decides with precision 6).
  if (exp < -4 || exp >= 6) return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  const neg = mant.startsWith('-');
  const digits = mant.replace(/^-/, '').replace('.', '');
  let s: string;
  if (exp < 0) s = `0.${'0'.repeat(-exp - 1)}${digits}`;
  else if (digits.length <= exp + 1) s = digits + '0'.repeat(exp + 1 - digits.length);
  else s = `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  return (neg ? '-' : '') + s;
}

/** float64 with %f and a precision, rounding exact ties to even as Go's strconv does (0.25 -> 0.2). */
export function goFixed(f: number, prec: number): string {
  if (!Number.isFinite(f)) return goFloat(f);
  const js = f.toFixed(prec);
  // toFixed rounds exact ties up; find exact ties with the double's exact binary value.
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, Math.abs(f));
  const bits = buf.getBigUint64(0);
  const expBits = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let exp = expBits - 1075;
  if (expBits === 0) exp = -1074;
  else mant |= 1n << 52n;
  if (exp >= 0) return js; // an integer: no tie possible
  // |f| * 10^prec = mant * 10^prec / 2^-exp; a tie when the remainder is exactly half.
  const num = mant * 10n ** BigInt(prec);
  const den = 1n << BigInt(-exp);
  const q = num / den;
  const r = num % den;
  if (r * 2n !== den) return js;
  const even = q % 2n === 0n ? q : q + 1n;
  let digits = even.toString().padStart(prec + 1, '0');
  if (prec > 0) digits = `${digits.slice(0, -prec)}.${digits.slice(-prec)}`;
  return (f < 0 ? '-' : '') + digits;
}

/** fmt's %v of a value inside a composite (nil prints `<nil>`). */
export function formatValue(v: unknown): string {
  if (v === undefined || v === null) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (typeof v === 'number') return goFloat(v);
  if (Array.isArray(v)) return `[${v.map(formatValue).join(' ')}]`;
  if (v instanceof GoStruct)
    return `${v.typeName.startsWith('*') ? '&' : ''}{${Object.values(v.fields).map(formatValue).join(' ')}}`;
  const o = v as Record<string, unknown>;
  return `map[${Object.keys(o)
    .sort(compareGoStrings)
    .map((k) => `${k}:${formatValue(o[k])}`)
    .join(' ')}]`;
}

/** Go sorts strings by bytes (UTF-8), which is code point order. */
export function compareGoStrings(a: string, b: string): number {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return Buffer.compare(x, y);
}

/** Go's truth: false, 0, nil, empty string / slice / map are false. */
export function truth(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') return v.length > 0;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof GoStruct) return true;
  return Object.keys(v as object).length > 0;
}

/** strconv.Quote: a double-quoted Go string literal. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (cp === 7) out += '\\a';
    else if (cp === 8) out += '\\b';
    else if (cp === 12) out += '\\f';
    else if (cp === 10) out += '\\n';
    else if (cp === 13) out += '\\r';
    else if (cp === 9) out += '\\t';
    else if (cp === 11) out += '\\v';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (/[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(ch) || ch === ' ') out += ch;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return out + '"';
}

/** encoding/json's string escaping (HTML-safe: <, >, & and U+2028/2029 escaped). */
function jsonString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20 || ch === '<' || ch === '>' || ch === '&' || cp === 0x2028 || cp === 0x2029)
      out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return out + '"';
}

/** encoding/json's float64 (shortest digits; exponent form below 1e-6 and from 1e21, as e-7 / e+21). */
function jsonNumber(f: number): string {
  if (!Number.isFinite(f)) throw new Error(`json: unsupported value: ${goFloat(f)}`);
  return JSON.stringify(f);
}

/** json.Marshal (indent '' ) or json.MarshalIndent(v, '', indent): map keys sorted, HTML-safe strings. */
export function goJson(v: unknown, indent = '', depth = 0): string {
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'string') return jsonString(v);
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (typeof v === 'number') return jsonNumber(v);
  const nl = indent ? `\n${indent.repeat(depth + 1)}` : '';
  const end = indent ? `\n${indent.repeat(depth)}` : '';
  const sep = indent ? ': ' : ':';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return `[${v.map((x) => nl + goJson(x, indent, depth + 1)).join(',')}${end}]`;
  }
  const o = v instanceof GoStruct ? v.fields : (v as Record<string, unknown>);
  const keys = v instanceof GoStruct ? Object.keys(o) : Object.keys(o).sort(compareGoStrings);
  if (keys.length === 0) return '{}';
  return `{${keys.map((k) => `${nl}${jsonString(k)}${sep}${goJson(o[k], indent, depth + 1)}`).join(',')}${end}}`;
}

/** A JSON document into template values (numbers float64, objects maps). */
export function fromJson(text: string): unknown {
  return JSON.parse(text);
}
