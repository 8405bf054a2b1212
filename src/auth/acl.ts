/**
 * ACL evaluation as Vault's vault/acl.go: rules for the same path merge across policies as `NewACL`
 * merges them (deny wins, capabilities union, parameter lists merge, the shorter wrapping TTL bounds
 * win); an exact rule beats globs; among globs and `+` rules the most specific decides
 * (`CheckAllowedFromNonExactPaths`); the operation then passes `AllowOperation`'s checks: capability,
 * wrapping TTL bounds, required / denied / allowed parameters. Default deny.
 */
import type { TokenIdentity } from '../framework/context.js';
import { TemplateError } from '../framework/errors.js';
import { populateTemplate } from './templates.js';

/** Capabilities a policy can grant (vault/policy.go). */
export const CAPABILITIES = [
  'create',
  'read',
  'update',
  'delete',
  'list',
  'sudo',
  'deny',
  'patch',
  'subscribe',
  'recover',
] as const;
/** A capability name. */
export type Capability = (typeof CAPABILITIES)[number];

/** A value in allowed_parameters / denied_parameters lists. */
export type ParamValue = string | number | boolean | null;

/** One `path "..." { ... }` rule as written (path keeps its trailing `*`). */
export interface PathRule {
  path: string;
  capabilities: string[];
  allowedParameters?: Record<string, ParamValue[]>;
  deniedParameters?: Record<string, ParamValue[]>;
  requiredParameters?: string[];
  /** Seconds; 0 or absent = no bound. */
  minWrappingTtl?: number;
  maxWrappingTtl?: number;
  subscribeEventTypes?: string[];
  /** The path holds identity template directives ({{identity.entity.id}} ...), resolved per token. */
  templated?: boolean;
}

/** A parsed policy. */
export interface Policy {
  name: string;
  rules: PathRule[];
  /** Source text as written (HCL or JSON). */
  raw: string;
  /** Some rule is templated: the ACL depends on the token's identity. */
  templated?: boolean;
}

const DENY = 1;
const CREATE = 2;
const READ = 4;
const UPDATE = 8;
const DELETE = 16;
const LIST = 32;
const SUDO = 64;
const PATCH = 128;
const SUBSCRIBE = 256;
const RECOVER = 512;
const BIT: Record<string, number> = {
  deny: DENY,
  create: CREATE,
  read: READ,
  update: UPDATE,
  delete: DELETE,
  list: LIST,
  sudo: SUDO,
  patch: PATCH,
  subscribe: SUBSCRIBE,
  recover: RECOVER,
};
/** Order of sys/capabilities answers before sorting (vault/acl.go Capabilities). */
const CAP_ORDER: Array<[number, string]> = [
  [SUDO, 'sudo'],
  [READ, 'read'],
  [LIST, 'list'],
  [UPDATE, 'update'],
  [DELETE, 'delete'],
  [CREATE, 'create'],
  [PATCH, 'patch'],
  [SUBSCRIBE, 'subscribe'],
  [RECOVER, 'recover'],
];

/** Merged permissions of one path pattern (Vault's ACLPermissions). */
export interface Permissions {
  bits: number;
  minWrappingTtl: number;
  maxWrappingTtl: number;
  /** null = no constraint (Vault's nil map); an empty object is "allow no parameter"... as Vault: len 0 = none. */
  allowed: Record<string, ParamValue[]> | null;
  denied: Record<string, ParamValue[]> | null;
  required: string[];
  subscribeEventTypes: string[];
}

/** What `check` needs to know about a request. */
export interface AclRequest {
  operation: 'create' | 'read' | 'update' | 'delete' | 'list' | 'patch';
  /** Full logical path (a list request's path ends with "/"). */
  path: string;
  /** Request data as sent (body and query; not path parameters), for parameter constraints. */
  data?: Record<string, unknown>;
  /** Seconds of the requested response wrapping, when the request asks for it. */
  wrapTtl?: number;
}

/** The outcome of `check` (Vault's ACLResults). */
export interface AclResult {
  allowed: boolean;
  /** The deciding rule grants sudo (needed on root-protected paths). */
  rootPrivs: boolean;
}

interface SegmentRule {
  pattern: string;
  isPrefix: boolean;
  /** Pattern without the trailing `*`, split on "/". */
  parts: string[];
  wcPath: string;
  firstWildcard: number;
  wildcards: number;
  perms: Permissions;
}

function clonePerms(r: PathRule): Permissions {
  const bits = r.capabilities.reduce((b, c) => b | (BIT[c] ?? 0), 0);
  if (bits & DENY)
    return {
      bits: DENY,
      minWrappingTtl: 0,
      maxWrappingTtl: 0,
      allowed: null,
      denied: null,
      required: [],
      subscribeEventTypes: [],
    };
  return {
    bits,
    minWrappingTtl: r.minWrappingTtl ?? 0,
    maxWrappingTtl: r.maxWrappingTtl ?? 0,
    allowed: r.allowedParameters ? copyParams(r.allowedParameters) : null,
    denied: r.deniedParameters ? copyParams(r.deniedParameters) : null,
    required: [...(r.requiredParameters ?? [])],
    subscribeEventTypes: [...(r.subscribeEventTypes ?? [])],
  };
}

function copyParams(p: Record<string, ParamValue[]>): Record<string, ParamValue[]> {
  const o: Record<string, ParamValue[]> = Object.create(null) as Record<string, ParamValue[]>;
  for (const k of Object.keys(p)) o[k] = [...p[k]!];
  return o;
}

/** Merge `r` into `e` exactly as NewACL does. */
function mergeInto(e: Permissions, r: PathRule): void {
  if (e.bits & DENY) return; // an existing deny stays a deny
  const n = clonePerms(r);
  if (n.bits & DENY) {
    e.bits = DENY;
    e.allowed = null;
    e.denied = null;
    return;
  }
  e.bits |= n.bits;
  // Lifetimes prefer the minimum: the lesser of two max bounds, the lesser of two min bounds.
  if (n.maxWrappingTtl > 0 && (e.maxWrappingTtl === 0 || n.maxWrappingTtl < e.maxWrappingTtl))
    e.maxWrappingTtl = n.maxWrappingTtl;
  if (n.minWrappingTtl > 0 && (e.minWrappingTtl === 0 || n.minWrappingTtl < e.minWrappingTtl))
    e.minWrappingTtl = n.minWrappingTtl;
  e.allowed = mergeParams(e.allowed, n.allowed);
  e.denied = mergeParams(e.denied, n.denied);
  for (const q of n.required) if (!e.required.includes(q)) e.required.push(q);
  for (const t of n.subscribeEventTypes) if (!e.subscribeEventTypes.includes(t)) e.subscribeEventTypes.push(t);
}

/** Vault: an empty list (any value) on either side wins; otherwise values append. */
function mergeParams(
  e: Record<string, ParamValue[]> | null,
  n: Record<string, ParamValue[]> | null,
): Record<string, ParamValue[]> | null {
  if (!n || Object.keys(n).length === 0) return e;
  if (!e) return copyParams(n);
  for (const k of Object.keys(n)) {
    const v = n[k]!;
    if (v.length === 0 || (k in e && e[k]!.length === 0)) e[k] = [];
    else e[k] = [...v, ...(e[k] ?? [])];
  }
  return e;
}

/** Paths whose deciding permissions an ACL remembers (cleared when full; an ACL is rebuilt on policy change). */
const ACL_MEMO_SIZE = 4096;

/** A compiled ACL for one token's policies (and identity, for templated policies). */
export class ACL {
  private readonly exact = new Map<string, Permissions>();
  /** Prefix rules by prefix (the pattern without its trailing `*`). */
  private readonly prefix = new Map<string, Permissions>();
  private readonly prefixLengths: number[] = [];
  private readonly segment = new Map<string, SegmentRule>();
  private readonly memo = new Map<string, Permissions | null>();
  readonly root: boolean;

  /**
   * Build from policies; templated rules resolve against `identity` and are left out when a
   * directive cannot be resolved (Vault's parseACLPolicyWithTemplating skips that path).
   */
  constructor(policies: Policy[], identity?: TokenIdentity, nowMs: number = Date.now()) {
    this.root = policies.some((p) => p.name === 'root');
    for (const p of policies) {
      for (const rule of p.rules) {
        let r = rule;
        if (rule.templated) {
          try {
            r = { ...rule, path: populateTemplate(rule.path, identity, nowMs) };
          } catch (e) {
            if (e instanceof TemplateError) continue;
            throw e;
          }
          if (r.path.includes('+*')) continue;
        }
        this.insert(r);
      }
    }
    this.prefixLengths.push(...new Set([...this.prefix.keys()].map((k) => k.length)));
    this.prefixLengths.sort((a, b) => b - a);
  }

  private insert(r: PathRule): void {
    const path = r.path;
    const hasSegment = path === '+' || path.includes('/+') || path.startsWith('+/');
    if (hasSegment) {
      const existing = this.segment.get(path);
      if (existing) mergeInto(existing.perms, r);
      else {
        const isPrefix = path.endsWith('*');
        const wcPath = isPrefix ? path.slice(0, -1) : path;
        const parts = wcPath.split('/');
        this.segment.set(path, {
          pattern: path,
          isPrefix,
          parts,
          wcPath,
          firstWildcard: path.indexOf('+'),
          wildcards: parts.filter((x) => x === '+').length,
          perms: clonePerms(r),
        });
      }
      return;
    }
    const isPrefix = path.endsWith('*');
    const key = isPrefix ? path.slice(0, -1) : path;
    const tree = isPrefix ? this.prefix : this.exact;
    const existing = tree.get(key);
    if (existing) mergeInto(existing, r);
    else tree.set(key, clonePerms(r));
  }

  /** The longest prefix rule matching `path` (radix LongestPrefix). */
  private longestPrefix(path: string): { prefix: string; perms: Permissions } | undefined {
    for (const len of this.prefixLengths) {
      if (len > path.length) continue;
      const k = path.slice(0, len);
      const perms = this.prefix.get(k);
      if (perms) return { prefix: k, perms };
    }
    return undefined;
  }

  /** Vault's CheckAllowedFromNonExactPaths: the most specific prefix or `+` rule matching `path`. */
  nonExact(path: string): Permissions | undefined {
    const memo = this.memo.get(path);
    if (memo !== undefined) return memo ?? undefined;
    const found = this.computeNonExact(path);
    if (this.memo.size >= ACL_MEMO_SIZE) this.memo.clear();
    this.memo.set(path, found ?? null);
    return found;
  }

  private computeNonExact(path: string): Permissions | undefined {
    const lp = this.longestPrefix(path);
    if (this.segment.size === 0) return lp?.perms;
    type Cand = { first: number; isPrefix: boolean; wildcards: number; wcPath: string; perms: Permissions };
    let best: Cand | undefined = lp
      ? { first: lp.prefix.length, isPrefix: true, wildcards: 0, wcPath: lp.prefix, perms: lp.perms }
      : undefined;
    const pathParts = path.split('/');
    for (const s of this.segment.values()) {
      if (pathParts.length < s.parts.length) continue;
      if (!s.isPrefix && s.parts.length !== pathParts.length) continue;
      let ok = true;
      for (let i = 0; i < s.parts.length; i++) {
        const a = s.parts[i]!;
        const p = pathParts[i]!;
        if (a === '+' || a === p) continue;
        if (s.isPrefix && i === s.parts.length - 1 && p.startsWith(a)) continue;
        ok = false;
        break;
      }
      if (!ok) continue;
      const c: Cand = {
        first: s.firstWildcard,
        isPrefix: s.isPrefix,
        wildcards: s.wildcards,
        wcPath: s.wcPath,
        perms: s.perms,
      };
      if (!best || lowerPriority(best, c)) best = c;
    }
    return best?.perms;
  }

  /** Permissions deciding `op` on `path`, in AllowOperation's lookup order (LIST tries the no-slash path). */
  private lookup(op: string, path: string): Permissions | undefined {
    while (path.startsWith('/')) path = path.slice(1);
    const ex = this.exact.get(path);
    if (ex) return ex;
    if (op === 'list') {
      const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
      const ex2 = this.exact.get(trimmed);
      if (ex2) return ex2;
      if (path.endsWith('/')) {
        const p = this.nonExact(trimmed);
        if (p) return p;
      }
    }
    return this.nonExact(path);
  }

  /** Vault's AllowOperation: capability, wrapping TTL bounds and parameter constraints. */
  check(req: AclRequest): AclResult {
    if (this.root) return ALLOWED_SUDO;
    const perms = this.lookup(req.operation, req.path);
    if (!perms) return DENIED;
    const caps = perms.bits;
    const rootPrivs = (caps & SUDO) !== 0;
    const need = BIT[req.operation]!;
    if ((caps & need) === 0) return rootPrivs ? DENIED_SUDO : DENIED;
    let ok = true;
    if (perms.maxWrappingTtl > 0 && (req.wrapTtl === undefined || req.wrapTtl > perms.maxWrappingTtl)) ok = false;
    else if (perms.minWrappingTtl > 0 && (req.wrapTtl === undefined || req.wrapTtl < perms.minWrappingTtl)) ok = false;
    // Merging can leave min > max even though each block was checked on write.
    else if (perms.minWrappingTtl && perms.maxWrappingTtl && perms.maxWrappingTtl < perms.minWrappingTtl) ok = false;
    // Most rules carry no parameter constraints: skip the walk over the request data (hot path).
    else if (
      (perms.required.length || perms.denied || perms.allowed) &&
      (req.operation === 'read' ||
        req.operation === 'update' ||
        req.operation === 'create' ||
        req.operation === 'patch')
    ) {
      ok = parametersAllowed(perms, req.data ?? {});
    }
    if (!ok) return rootPrivs ? DENIED_SUDO : DENIED;
    return rootPrivs ? ALLOWED_SUDO : ALLOWED;
  }

  /** Whether `capability` is granted on `path` (no parameter or wrapping constraints known). */
  allowed(capability: string, path: string): boolean {
    if (this.root) return true;
    if (capability === 'sudo') {
      const p = this.lookup('read', path);
      return !!p && (p.bits & (SUDO | DENY)) === SUDO;
    }
    if (!(capability in BIT) || capability === 'deny') return false;
    return this.check({ operation: capability as AclRequest['operation'], path }).allowed;
  }

  /** Capabilities on a path (sys/capabilities*): LIST lookup semantics, sorted; ["deny"] when none. */
  capabilities(path: string): string[] {
    if (this.root) return ['root'];
    const p = this.lookup('list', path);
    const bits = p?.bits ?? 0;
    const out: string[] = [];
    for (const [b, name] of CAP_ORDER) if (bits & b) out.push(name);
    if (bits & DENY || out.length === 0) return ['deny'];
    return out.sort();
  }

  /** Vault's sys/internal/ui/resultant-acl view: exact and glob paths with their permissions. */
  resultant(): { exact_paths: Record<string, unknown>; glob_paths: Record<string, unknown>; root: boolean } {
    if (this.root) return { exact_paths: {}, glob_paths: {}, root: true };
    const view = (p: Permissions) => {
      const caps: string[] = [];
      for (const [b, name] of [
        [CREATE, 'create'],
        [DELETE, 'delete'],
        [LIST, 'list'],
        [READ, 'read'],
        [SUDO, 'sudo'],
        [UPDATE, 'update'],
        [PATCH, 'patch'],
        [SUBSCRIBE, 'subscribe'],
        [RECOVER, 'recover'],
      ] as Array<[number, string]>) {
        if (p.bits & b) caps.push(name);
      }
      const res: Record<string, unknown> = { capabilities: p.bits & DENY || caps.length === 0 ? ['deny'] : caps };
      if (p.minWrappingTtl) res.min_wrapping_ttl = p.minWrappingTtl;
      if (p.maxWrappingTtl) res.max_wrapping_ttl = p.maxWrappingTtl;
      if (p.allowed && Object.keys(p.allowed).length) res.allowed_parameters = { ...p.allowed };
      if (p.denied && Object.keys(p.denied).length) res.denied_parameters = { ...p.denied };
      if (p.required.length) res.required_parameters = [...p.required];
      return res;
    };
    const exact: Record<string, unknown> = {};
    const glob: Record<string, unknown> = {};
    for (const [k, v] of [...this.exact].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) exact[k] = view(v);
    for (const [k, v] of [...this.prefix].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) glob[k] = view(v);
    for (const [k, v] of [...this.segment].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) glob[k] = view(v.perms);
    return { exact_paths: exact, glob_paths: glob, root: false };
  }
}

// Shared, frozen results: a check allocates nothing on the hot path.
const ALLOWED: AclResult = Object.freeze({ allowed: true, rootPrivs: false });
const ALLOWED_SUDO: AclResult = Object.freeze({ allowed: true, rootPrivs: true });
const DENIED: AclResult = Object.freeze({ allowed: false, rootPrivs: false });
const DENIED_SUDO: AclResult = Object.freeze({ allowed: false, rootPrivs: true });

/** Vault's priority order (acl.go `less`): is `a` of lower priority than `b`? */
function lowerPriority(
  a: { first: number; isPrefix: boolean; wildcards: number; wcPath: string },
  b: typeof a,
): boolean {
  if (a.first !== b.first) return a.first < b.first;
  if (a.isPrefix !== b.isPrefix) return a.isPrefix;
  if (a.wildcards !== b.wildcards) return a.wildcards > b.wildcards;
  if (a.wcPath.length !== b.wcPath.length) return a.wcPath.length < b.wcPath.length;
  return a.wcPath < b.wcPath;
}

/** AllowOperation's parameter checks: required, then (with data) denied, then allowed. */
function parametersAllowed(perms: Permissions, data: Record<string, unknown>): boolean {
  for (const r of perms.required) if (!Object.hasOwn(data, r.toLowerCase())) return false;
  const keys = Object.keys(data);
  if (keys.length === 0) return true;
  const denied = perms.denied;
  if (denied && Object.keys(denied).length > 0) {
    if ('*' in denied) return false;
    for (const k of keys) {
      const list = denied[k.toLowerCase()];
      if (list && valueInDeniedList(data[k], list)) return false;
    }
  }
  const allowed = perms.allowed;
  if (!allowed || Object.keys(allowed).length === 0) return true;
  const allowedAll = '*' in allowed;
  if (allowedAll && Object.keys(allowed).length === 1) return true;
  for (const k of keys) {
    const lk = k.toLowerCase();
    const list = Object.hasOwn(allowed, lk) ? allowed[lk] : undefined;
    if (!list && !allowedAll) return false;
    if (list && !valueInAllowedList(data[k], list)) return false;
  }
  return true;
}

/** Vault's ParseCommaStringSlice: a JSON array, or comma-separated items, trimmed, empty dropped. */
function commaSlice(s: string): unknown[] | null {
  const t = s.trim();
  if (t.startsWith('[')) {
    try {
      const v: unknown = JSON.parse(t);
      return Array.isArray(v) ? v : null;
    } catch {
      return null;
    }
  }
  return t
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

function valueInAllowedList(v: unknown, list: ParamValue[]): boolean {
  if (list.length === 0) return true;
  if (valueInList(v, list)) return true;
  if (Array.isArray(v)) return v.every((x) => valueInList(x, list));
  if (typeof v === 'string') {
    const parts = commaSlice(v);
    if (parts) return parts.every((x) => valueInList(x, list));
  }
  return false;
}

function valueInDeniedList(v: unknown, list: ParamValue[]): boolean {
  if (list.length === 0) return true;
  if (valueInList(v, list)) return true;
  if (Array.isArray(v)) return v.some((x) => valueInList(x, list));
  if (typeof v === 'string') {
    const parts = commaSlice(v);
    if (parts) return parts.some((x) => valueInList(x, list));
  }
  return false;
}

/**
 * Vault's valueInParameterList: string list items glob-match (GlobbedStringsMatch), others compare
 * by value. Deliberately beyond Vault: a JSON number or boolean in the request also matches the
 * string of its value ("2" matches 2), since Vault's JSON decoding makes such values match nothing
 * and so would let a `denied_parameters` list of numbers through.
 */
function valueInList(v: unknown, list: ParamValue[]): boolean {
  for (const el of list) {
    if (el === null || v === null || v === undefined) {
      if (el === (v ?? null)) return true;
    } else if (typeof el === 'string') {
      const s = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
      if (s !== undefined && globbedStringsMatch(el, s)) return true;
    } else if (el === v) return true;
    else if (typeof el === 'number' && typeof v === 'string' && v.trim() !== '' && Number(v) === el) return true;
    else if (typeof el === 'boolean' && typeof v === 'string' && v === String(el)) return true;
  }
  return false;
}

/** go-secure-stdlib strutil.GlobbedStringsMatch: `*` at either end of the item is a wildcard. */
export function globbedStringsMatch(item: string, val: string): boolean {
  if (item.length < 2) return val === item;
  const pre = item.startsWith('*');
  const suf = item.endsWith('*');
  if (pre && suf) return val.includes(item.slice(1, -1));
  if (pre) return val.endsWith(item.slice(1));
  if (suf) return val.startsWith(item.slice(0, -1));
  return val === item;
}
