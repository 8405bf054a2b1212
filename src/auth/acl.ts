/**
 * ACL evaluation with Vault's rules: rules for the same path pattern merge across policies; of the
 * patterns that match a request path the most specific one decides; `deny` in it wins; default deny.
 * Globs: a trailing `*` is a prefix match, `+` matches exactly one path segment.
 */

/** Capabilities a policy can grant. */
export const CAPABILITIES = ['create', 'read', 'update', 'delete', 'list', 'sudo', 'deny', 'patch'] as const;
/** A capability name. */
export type Capability = (typeof CAPABILITIES)[number];

/** One `path "..." { capabilities = [...] }` rule. */
export interface PathRule {
  path: string;
  capabilities: string[];
}

/** A parsed policy. */
export interface Policy {
  name: string;
  rules: PathRule[];
  /** Source text as written (HCL or JSON). */
  raw: string;
}

interface CompiledRule {
  pattern: string;
  caps: Set<string>;
  glob: boolean;
  segments: string[] | null;
  plusCount: number;
  firstWildcard: number;
}

function compileRule(pattern: string, caps: Set<string>): CompiledRule {
  const glob = pattern.endsWith('*');
  const base = glob ? pattern.slice(0, -1) : pattern;
  const segs = base.split('/');
  const hasPlus = segs.includes('+');
  // Character position of the first wildcard (a `+` segment or the trailing `*`), Vault's rule 1.
  let firstWildcard = glob ? base.length : Infinity;
  let pos = 0;
  for (const seg of segs) {
    if (seg === '+') {
      firstWildcard = Math.min(firstWildcard, pos);
      break;
    }
    pos += seg.length + 1;
  }
  return {
    pattern,
    caps,
    glob,
    segments: hasPlus ? segs : null,
    plusCount: segs.filter((x) => x === '+').length,
    firstWildcard,
  };
}

function ruleMatches(r: CompiledRule, path: string): boolean {
  if (!r.segments) {
    const base = r.glob ? r.pattern.slice(0, -1) : r.pattern;
    return r.glob ? path.startsWith(base) : path === base;
  }
  // With `+` segments: compare segment by segment; a trailing glob applies to the last segment.
  const ps = path.split('/');
  const rs = r.segments;
  if (!r.glob && ps.length !== rs.length) return false;
  if (r.glob && ps.length < rs.length) return false;
  for (let i = 0; i < rs.length; i++) {
    const seg = rs[i]!;
    const isLast = i === rs.length - 1;
    if (seg === '+') {
      if (ps[i] === undefined) return false;
      continue;
    }
    if (isLast && r.glob) {
      const rest = ps.slice(i).join('/');
      if (!rest.startsWith(seg)) return false;
      return true;
    }
    if (ps[i] !== seg) return false;
  }
  return true;
}

/**
 * Whether `a` beats `b` when both match (Vault's documented priority, in order): the first wildcard
 * comes later; it does not end in `*`; it has fewer `+` segments; it is longer; it sorts later.
 */
function morePrecise(a: CompiledRule, b: CompiledRule): boolean {
  if (a.firstWildcard !== b.firstWildcard) return a.firstWildcard > b.firstWildcard;
  if (a.glob !== b.glob) return !a.glob;
  if (a.plusCount !== b.plusCount) return a.plusCount < b.plusCount;
  if (a.pattern.length !== b.pattern.length) return a.pattern.length > b.pattern.length;
  return a.pattern > b.pattern;
}

/** Paths whose deciding rule an ACL remembers (cleared when full; an ACL is rebuilt on policy change). */
const ACL_MEMO_SIZE = 4096;

/** A compiled ACL for one token's policies. */
export class ACL {
  private readonly exact = new Map<string, CompiledRule>();
  private readonly wild: CompiledRule[] = [];
  readonly root: boolean;

  constructor(policies: Policy[]) {
    this.root = policies.some((p) => p.name === 'root');
    const merged = new Map<string, Set<string>>();
    for (const p of policies) {
      for (const r of p.rules) {
        const set = merged.get(r.path) ?? new Set<string>();
        for (const c of r.capabilities) set.add(c);
        merged.set(r.path, set);
      }
    }
    for (const [pattern, caps] of merged) {
      const c = compileRule(pattern, caps);
      if (!c.glob && !c.segments) this.exact.set(pattern, c);
      else this.wild.push(c);
    }
  }

  /** The rule that decides for `path`, or undefined (default deny). */
  decidingRule(path: string): CompiledRule | undefined {
    const ex = this.exact.get(path);
    if (ex) return ex;
    // The same few paths come again and again (transit/encrypt/k): remember their deciding rule.
    const memo = this.memo.get(path);
    if (memo !== undefined) return memo ?? undefined;
    let best: CompiledRule | undefined;
    for (const r of this.wild) if (ruleMatches(r, path) && (!best || morePrecise(r, best))) best = r;
    if (this.memo.size >= ACL_MEMO_SIZE) this.memo.clear();
    this.memo.set(path, best ?? null);
    return best;
  }
  private readonly memo = new Map<string, CompiledRule | null>();

  /** Whether `capability` is granted on `path`. */
  allowed(capability: string, path: string): boolean {
    if (this.root) return true;
    const r = this.decidingRule(path);
    if (!r || r.caps.has('deny')) return false;
    if (r.caps.has(capability)) return true;
    // Vault: patch is granted by update only when listed explicitly; create/update are distinct.
    return false;
  }

  /** Capabilities on a path (sys/capabilities-self). */
  capabilities(path: string): string[] {
    if (this.root) return ['root'];
    const r = this.decidingRule(path);
    if (!r) return ['deny'];
    if (r.caps.has('deny')) return ['deny'];
    return [...r.caps].sort();
  }
}
