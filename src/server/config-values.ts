/**
 * One value of a config file in Vault's format (HCL or JSON), read from the syntax tree: where it sits
 * (At, whose failures are ConfigErrors naming file, line and key) and Vault's weak decoding of
 * booleans, integers, strings and stanzas.
 */
import type { HclItem, HclObject, HclValue } from '../framework/hcl.js';

/** Thrown for a bad config file or flag (the CLI prints it and exits 1). */
export class ConfigError extends Error {}

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

export function describeType(v: HclValue): string {
  return v.type === 'object'
    ? 'a block/object'
    : v.type === 'list'
      ? 'a list'
      : v.type === 'bool'
        ? 'a boolean'
        : v.type === 'number'
          ? 'a number'
          : v.type === 'null'
            ? 'null'
            : 'a string';
}

/** Weak boolean as Vault's config decoding (mapstructure): true/"true"/1/"1"/"t" ...; "" is false. */
export function weakBool(v: HclValue, at: At): boolean {
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

export function str(v: HclValue, at: At, opts: { nonEmpty?: boolean } = {}): string {
  if (v.type !== 'string') at.fail(`must be a string, got ${describeType(v)}`);
  if (opts.nonEmpty && v.value === '') at.fail('must not be empty');
  return v.value;
}

/** A positive integer given as a number or a numeric string (Vault's weak decoding). */
export function positiveInt(v: HclValue, at: At, what = 'a positive integer'): number {
  const n = v.type === 'number' ? v.value : v.type === 'string' && /^\s*\d+\s*$/.test(v.value) ? Number(v.value) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0)
    at.fail(`must be ${what}, got ${v.type === 'string' ? `"${v.value}"` : describeType(v)}`);
  return n;
}

/** Stanza value as a string, as Vault hands storage/seal parameters to backends (non-strings JSON-encoded). */
export function stanzaString(v: HclValue, at: At): string {
  if (v.type === 'string') return v.value;
  if (v.type === 'bool' || v.type === 'number') return String(v.value);
  at.fail(`must be a string, number or boolean, got ${describeType(v)}`);
}

/** A stanza written either as a block `name "type" { ... }` or as an object `name = { type = { ... } }`. */
export function stanzas(item: HclItem, at: At): Array<{ type: string; body: HclObject; at: At }> {
  if (item.value.type !== 'object') at.fail(`must be a block, as in ${item.key} "<type>" { ... }`);
  if (item.labels.length > 1) at.fail(`takes one label (the type), got ${item.labels.length}`);
  if (item.labels.length === 1)
    return [{ type: item.labels[0]!, body: item.value, at: new At(at.file, item.line, `${at.key}.${item.labels[0]}`) }];
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
export function expandListItems(item: HclItem): HclItem[] {
  if (item.value.type !== 'list') return [item];
  return item.value.items.map((v) => ({ ...item, value: v, line: v.line }));
}

/** An http:// or https:// URL (api_addr, cluster_addr), without trailing slashes. */
export function url(v: HclValue, at: At): string {
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
