/**
 * Reading the plain values of an agent configuration (what `hclToPlain` makes of HCL1 or JSON) into
 * typed settings, with errors that name the stanza and key: `auto_auth.method "approle".config:
 * role_id_file_path is required`. Shared by config.ts (the stanzas) and nothing else.
 */
import type { PlainObject, PlainValue } from '../framework/hcl.js';
import { parseDuration } from '../framework/fields.js';

/** A configuration that cannot be used; the message names the file, stanza and key. */
export class AgentConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentConfigError';
  }
}

export function isObject(v: PlainValue | undefined): v is PlainObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The bodies of a block that may occur more than once: `template { }` twice is a list; JSON gives
 * `"template": [{...}, {...}]` or one object.
 */
export function bodies(v: PlainValue | undefined, where: string): PlainObject[] {
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.flatMap((b) => {
    if (Array.isArray(b)) return bodies(b, where);
    if (!isObject(b)) throw new AgentConfigError(`${where}: expected a block`);
    return [b];
  });
}

/**
 * The bodies of a labelled block (`method "approle" { }`, `listener "tcp" { }`), as label and body.
 * Vault also accepts the label as a `type` key (`method { type = "approle" }`) and JSON as
 * `{"approle": {...}}` or a list of those.
 */
export function labelled(v: PlainValue | undefined, where: string): { label: string; body: PlainObject }[] {
  const out: { label: string; body: PlainObject }[] = [];
  for (const b of bodies(v, where)) {
    if (typeof b.type === 'string') {
      const { type, ...rest } = b;
      out.push({ label: type, body: rest });
      continue;
    }
    for (const [label, inner] of Object.entries(b)) {
      for (const body of bodies(inner, `${where} "${label}"`)) out.push({ label, body });
    }
  }
  return out;
}

/** Typed reads of one block's keys; `done()` refuses keys nobody asked for (typos). */
export class Keys {
  private readonly seen = new Set<string>();
  constructor(
    readonly body: PlainObject,
    readonly where: string,
  ) {}

  private take(key: string): PlainValue | undefined {
    this.seen.add(key);
    return this.body[key];
  }

  has(key: string): boolean {
    return this.body[key] !== undefined;
  }

  str(key: string, required: true): string;
  str(key: string, required?: false): string | undefined;
  str(key: string, required = false): string | undefined {
    const v = this.take(key);
    if (v === undefined || v === null) {
      if (required) throw new AgentConfigError(`${this.where}: ${key} is required`);
      return undefined;
    }
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    throw new AgentConfigError(`${this.where}: ${key} must be a string`);
  }

  bool(key: string, dflt: boolean): boolean {
    const v = this.take(key);
    if (v === undefined || v === null) return dflt;
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === '1' || v === 1) return true;
    if (v === 'false' || v === '0' || v === 0) return false;
    throw new AgentConfigError(`${this.where}: ${key} must be true or false`);
  }

  /** A boolean or one of the given words (`use_auto_auth_token = "force"`). */
  boolOr<W extends string>(key: string, dflt: boolean | W, words: readonly W[]): boolean | W {
    const v = this.body[key];
    if (typeof v === 'string' && (words as readonly string[]).includes(v)) {
      this.seen.add(key);
      return v as W;
    }
    return this.bool(key, dflt as boolean) as boolean | W;
  }

  int(key: string): number | undefined {
    const v = this.take(key);
    if (v === undefined || v === null) return undefined;
    const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isInteger(n))
      throw new AgentConfigError(`${this.where}: ${key} must be an integer`);
    return n;
  }

  /** Seconds, from `"5m"`, `300` or `"300"`. */
  duration(key: string): number | undefined {
    const v = this.take(key);
    if (v === undefined || v === null || v === '') return undefined;
    try {
      return parseDuration(`${this.where}: ${key}`, v);
    } catch (e) {
      throw new AgentConfigError((e as Error).message);
    }
  }

  /**
   * A file mode: a number as HCL1 reads it (`0640` is octal there), or a string read as octal
   * (`perms = "0640"`, `"640"`).
   */
  mode(key: string): number | undefined {
    const v = this.take(key);
    if (v === undefined || v === null) return undefined;
    let n: number;
    if (typeof v === 'number') n = v;
    else if (typeof v === 'string' && /^0?[0-7]{1,4}$/.test(v.trim())) n = parseInt(v.trim(), 8);
    else throw new AgentConfigError(`${this.where}: ${key} must be a file mode such as 0640`);
    if (!Number.isInteger(n) || n < 0 || n > 0o7777)
      throw new AgentConfigError(`${this.where}: ${key} must be a file mode such as 0640`);
    return n;
  }

  /** A list of strings; a single string is a command line split on spaces (Vault's `command = "x y"`). */
  strings(key: string): string[] | undefined {
    const v = this.take(key);
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return [v];
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
    throw new AgentConfigError(`${this.where}: ${key} must be a string or a list of strings`);
  }

  obj(key: string): PlainObject | undefined {
    const v = this.take(key);
    if (v === undefined || v === null) return undefined;
    const list = bodies(v, `${this.where}.${key}`);
    return Object.assign({}, ...list) as PlainObject;
  }

  /** Mark keys as known without reading them (read elsewhere, or accepted and ignored). */
  accept(...keys: string[]): void {
    for (const k of keys) this.seen.add(k);
  }

  /** Refuse keys that were not read: a typo must not pass silently. */
  done(): void {
    const unknown = Object.keys(this.body).filter((k) => !this.seen.has(k));
    if (unknown.length)
      throw new AgentConfigError(
        `${this.where}: unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}`,
      );
  }
}
