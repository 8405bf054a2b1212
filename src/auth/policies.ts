/**
 * ACL policies in Vault's HCL syntax and in JSON, plus the built-in `root` and `default` policies.
 * HCL subset understood (what Vault policies use): comments (#, //, /* *\/), `path "<glob>" { ... }`
 * blocks with `capabilities = [..]` and optional attributes we keep but do not enforce yet
 * (`required_parameters`, `allowed_parameters`, `denied_parameters`, `min_wrapping_ttl`, ...).
 */
import { invalid } from '../framework/errors.js';
import { CAPABILITIES, type PathRule, type Policy } from './acl.js';
import { getJSON, putJSON, type Storage } from '../storage/backend.js';

type Tok = { t: 'str' | 'ident' | 'num' | 'punct'; v: string; line: number };

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  let line = 1;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\n') {
      line++;
      i++;
    } else if (/\s/.test(c)) i++;
    else if (c === '#' || (c === '/' && src[i + 1] === '/')) {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      if (end === -1) throw invalid('policy', `unterminated comment at line ${line}`);
      line += src.slice(i, end).split('\n').length - 1;
      i = end + 2;
    } else if (c === '"') {
      let j = i + 1;
      let s = '';
      while (j < src.length && src[j] !== '"') {
        if (src[j] === '\\') {
          const n = src[j + 1];
          s += n === 'n' ? '\n' : n === 't' ? '\t' : (n ?? '');
          j += 2;
        } else s += src[j++];
        if (src[j - 1] === '\n') throw invalid('policy', `unterminated string at line ${line}`);
      }
      if (j >= src.length) throw invalid('policy', `unterminated string at line ${line}`);
      out.push({ t: 'str', v: s, line });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < src.length && /[\w-]/.test(src[j]!)) j++;
      out.push({ t: 'ident', v: src.slice(i, j), line });
      i = j;
    } else if (/[0-9]/.test(c)) {
      let j = i;
      while (j < src.length && /[\w.]/.test(src[j]!)) j++;
      out.push({ t: 'num', v: src.slice(i, j), line });
      i = j;
    } else if ('{}[]=,:'.includes(c)) {
      out.push({ t: 'punct', v: c, line });
      i++;
    } else throw invalid('policy', `unexpected character "${c}" at line ${line}`);
  }
  return out;
}

type HclValue = string | number | boolean | HclValue[] | { [k: string]: HclValue };

class HclParser {
  private i = 0;
  constructor(private readonly toks: Tok[]) {}
  private peek(): Tok | undefined {
    return this.toks[this.i];
  }
  private next(what: string): Tok {
    const t = this.toks[this.i++];
    if (!t) throw invalid('policy', `unexpected end of input, expected ${what}`);
    return t;
  }
  private expect(v: string): void {
    const t = this.next(`"${v}"`);
    if (t.v !== v || t.t !== 'punct') throw invalid('policy', `expected "${v}" at line ${t.line}, got "${t.v}"`);
  }
  /** body := (ident (str)* ( '=' value | '{' body '}' ))* */
  body(end: string | null): Array<{ key: string; labels: string[]; value: HclValue }> {
    const items: Array<{ key: string; labels: string[]; value: HclValue }> = [];
    for (;;) {
      const t = this.peek();
      if (!t) {
        if (end) throw invalid('policy', `missing "${end}"`);
        return items;
      }
      if (end && t.t === 'punct' && t.v === end) {
        this.i++;
        return items;
      }
      const key = this.next('a name');
      if (key.t !== 'ident' && key.t !== 'str') throw invalid('policy', `expected a name at line ${key.line}, got "${key.v}"`);
      const labels: string[] = [];
      while (this.peek()?.t === 'str') labels.push(this.next('label').v);
      const op = this.next('"=" or "{"');
      if (op.v === '=' || op.v === ':') items.push({ key: key.v, labels, value: this.value() });
      else if (op.v === '{') items.push({ key: key.v, labels, value: objectOf(this.body('}')) });
      else throw invalid('policy', `expected "=" or "{" at line ${op.line}`);
      if (this.peek()?.v === ',') this.i++;
    }
  }
  value(): HclValue {
    const t = this.next('a value');
    if (t.t === 'str') return t.v;
    if (t.t === 'num') return Number(t.v.replace(/[a-z]+$/, ''));
    if (t.t === 'ident') return t.v === 'true' ? true : t.v === 'false' ? false : t.v;
    if (t.v === '[') {
      const arr: HclValue[] = [];
      while (this.peek()?.v !== ']') {
        arr.push(this.value());
        if (this.peek()?.v === ',') this.i++;
        else if (this.peek()?.v !== ']') throw invalid('policy', `expected "," or "]" at line ${this.peek()?.line ?? t.line}`);
      }
      this.i++;
      return arr;
    }
    if (t.v === '{') return objectOf(this.body('}'));
    throw invalid('policy', `unexpected "${t.v}" at line ${t.line}`);
  }
}

function objectOf(items: Array<{ key: string; labels: string[]; value: HclValue }>): { [k: string]: HclValue } {
  const o: { [k: string]: HclValue } = {};
  for (const it of items) o[it.key] = it.value;
  return o;
}

function rulesFromPathMap(pathMap: unknown): PathRule[] {
  if (!pathMap || typeof pathMap !== 'object') throw invalid('policy', 'expected "path" blocks');
  const rules: PathRule[] = [];
  const entries: Array<[string, unknown]> = Array.isArray(pathMap)
    ? pathMap.flatMap((m) => Object.entries(m as object))
    : Object.entries(pathMap as object);
  for (const [path, body] of entries) {
    const caps = (body as { capabilities?: unknown })?.capabilities;
    const policyVal = (body as { policy?: unknown })?.policy; // legacy `policy = "read"` form
    let list: string[];
    if (Array.isArray(caps)) list = caps.map(String);
    else if (caps !== undefined) throw invalid('policy', `path "${path}": capabilities must be a list`);
    else list = [];
    // Legacy `policy = "read"` adds to the capabilities (Vault merges both forms).
    if (typeof policyVal === 'string') list = [...list, ...legacyPolicy(policyVal)];
    for (const c of list) {
      if (!(CAPABILITIES as readonly string[]).includes(c)) throw invalid('policy', `path "${path}": invalid capability "${c}"`);
    }
    rules.push({ path: path.replace(/^\//, ''), capabilities: list });
  }
  return rules;
}

function legacyPolicy(p: string): string[] {
  switch (p) {
    case 'deny':
      return ['deny'];
    case 'read':
      return ['read', 'list'];
    case 'write':
      return ['create', 'read', 'update', 'delete', 'list'];
    case 'sudo':
      return ['create', 'read', 'update', 'delete', 'list', 'sudo'];
    default:
      throw invalid('policy', `invalid policy value "${p}"`);
  }
}

/** Parse policy text (HCL or JSON) into rules; throws 400 naming line and cause. */
export function parsePolicy(name: string, text: string): Policy {
  const trimmed = text.trim();
  let rules: PathRule[];
  if (trimmed.startsWith('{')) {
    let doc: unknown;
    try {
      doc = JSON.parse(trimmed);
    } catch (e) {
      throw invalid('policy', `invalid JSON: ${(e as Error).message}`);
    }
    rules = rulesFromPathMap((doc as { path?: unknown }).path ?? {});
  } else {
    const items = new HclParser(tokenize(text)).body(null);
    rules = [];
    for (const it of items) {
      if (it.key !== 'path') throw invalid('policy', `unknown block "${it.key}"`);
      if (it.labels.length !== 1) throw invalid('policy', 'path blocks need exactly one quoted path');
      rules.push(...rulesFromPathMap({ [it.labels[0]!]: it.value }));
    }
  }
  return { name, rules, raw: text };
}

/** Vault's default policy, attached to every non-root token unless `no_default_policy`. */
export const DEFAULT_POLICY = `# Allow tokens to look up, renew and revoke themselves
path "auth/token/lookup-self" { capabilities = ["read"] }
path "auth/token/renew-self" { capabilities = ["update"] }
path "auth/token/revoke-self" { capabilities = ["update"] }
path "sys/capabilities-self" { capabilities = ["update"] }
path "sys/internal/ui/resultant-acl" { capabilities = ["read"] }
`;

/** Vault treats policy names case-insensitively and stores them lowercased. */
function policyKey(name: string): string {
  const n = name.trim().toLowerCase();
  if (n === '' || n.length > 256 || n.includes('/')) throw invalid('name', 'must be 1 to 256 characters without "/"');
  return n;
}

/** Named policies stored behind the barrier (`sys/policy/<name>`), cached in memory. */
export class PolicyStore {
  private readonly cache = new Map<string, Policy>();
  /** Bumped by forget/clear: loads that overlapped one do not fill the cache. */
  private generation = 0;
  constructor(private readonly storage: Storage) {}

  /** Policy by name (`root` and `default` are built in; default may be overwritten). */
  async get(nameIn: string): Promise<Policy | null> {
    const name = policyKey(nameIn);
    if (name === 'root') return { name: 'root', rules: [], raw: '' };
    const cached = this.cache.get(name);
    if (cached) return cached;
    const gen = this.generation;
    const rec = await getJSON<{ raw: string }>(this.storage, `policy/${name}`);
    const text = rec?.raw ?? (name === 'default' ? DEFAULT_POLICY : null);
    if (text === null) return null;
    const p = parsePolicy(name, text);
    // A load that overlapped an invalidation (another node changed policies) is not cached.
    if (gen === this.generation) this.cache.set(name, p);
    return p;
  }
  /** Create or replace a policy from HCL or JSON text. */
  async put(nameIn: string, text: string): Promise<Policy> {
    const name = policyKey(nameIn);
    if (name === 'root') throw invalid('name', 'cannot update the root policy');
    const p = parsePolicy(name, text);
    await putJSON(this.storage, `policy/${name}`, { raw: text });
    this.cache.set(name, p);
    return p;
  }
  /** Delete a policy (root and default cannot be deleted). */
  async delete(nameIn: string): Promise<void> {
    const name = policyKey(nameIn);
    if (name === 'root' || name === 'default') throw invalid('name', `cannot delete the ${name} policy`);
    await this.storage.delete(`policy/${name}`);
    this.cache.delete(name);
  }
  /** Names of all policies, including built-ins. */
  async list(): Promise<string[]> {
    const names = new Set(['default', 'root']);
    for (const n of await this.storage.list('policy/')) if (!n.endsWith('/')) names.add(n);
    return [...names].sort();
  }
  /** Forget one cached policy (changed by another daemon on shared storage). */
  forget(name: string): void {
    this.generation++;
    this.cache.delete(name);
  }
  /** Forget cached policies (after seal). */
  clear(): void {
    this.generation++;
    this.cache.clear();
  }
}
