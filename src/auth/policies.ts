/**
 * ACL policies in Vault's HCL syntax and in JSON, plus the built-in `root`, `default` and
 * `response-wrapping` policies. Parsing follows Vault's `ParseACLPolicy` (vault/policy.go): every key
 * a policy may hold is either enforced by the ACL (acl.ts) or refused here with a 400 naming the key
 * and its line, never stored and ignored. The HCL/JSON syntax itself is read by policy-syntax.ts.
 */
import { invalid } from '../framework/errors.js';
import { parseDuration } from '../framework/fields.js';
import { CAPABILITIES, type ParamValue, type PathRule, type Policy } from './acl.js';
import { validateTemplate } from './templates.js';
import { getJSON, putJSON, type Storage } from '../storage/backend.js';
import { parseDocument, policyParseError as bad, type Node } from './policy-syntax.js';

/** Keys Vault's ParseACLPolicy accepts at the top level and inside a path block. */
const TOP_KEYS = new Set(['name', 'path']);
const PATH_KEYS = new Set([
  'comment',
  'policy',
  'capabilities',
  'allowed_parameters',
  'denied_parameters',
  'required_parameters',
  'min_wrapping_ttl',
  'max_wrapping_ttl',
  'mfa_methods',
  'control_group',
  'subscribe_event_types',
]);
/**
 * Enterprise keys: they restrict access (an MFA step, an approval), so storing them unenforced would
 * make a policy broader than written. keyhold refuses them.
 */
const ENTERPRISE_KEYS = new Set(['mfa_methods', 'control_group']);

/** The `path` entries of the document: `path "x" {}` blocks, `"path": {"x": {}}` and `"path": [{"x": {}}]`. */
function pathEntries(node: Node): Array<{ path: string; line: number; body: Node }> {
  const out: Array<{ path: string; line: number; body: Node }> = [];
  const fromObject = (o: Node) => {
    if (o.kind !== 'object') throw bad(`path: expected an object of paths at line ${o.line}`);
    for (const it of o.items) out.push({ path: it.key, line: it.line, body: it.value });
  };
  if (node.kind === 'list') for (const n of node.items) fromObject(n);
  else fromObject(node);
  return out;
}

function strList(n: Node, what: string): string[] {
  // HCL1 decodes a lone string into a one-element list for []string fields.
  if (n.kind === 'scalar' && typeof n.value === 'string') return [n.value];
  if (n.kind !== 'list') throw bad(`${what}: must be a list at line ${n.line}`);
  return n.items.map((x) => {
    if (x.kind !== 'scalar' || typeof x.value !== 'string')
      throw bad(`${what}: list items must be strings at line ${x.line}`);
    return x.value;
  });
}

/** allowed_parameters / denied_parameters: key -> list of scalar values (Vault: map[string][]interface{}). */
function paramMap(n: Node, where: string, what: string): Record<string, ParamValue[]> {
  if (n.kind === 'list' && n.items.length === 1 && n.items[0]!.kind === 'object') n = n.items[0]!; // JSON list-of-object form
  if (n.kind !== 'object') throw bad(`${where}: ${what}: must be an object of parameter lists at line ${n.line}`);
  const out: Record<string, ParamValue[]> = Object.create(null) as Record<string, ParamValue[]>;
  for (const it of n.items) {
    validateParameterKey(it.key, where, what, it.line);
    if (it.value.kind !== 'list')
      throw bad(`${where}: ${what}: "${it.key}" must be a list of values at line ${it.value.line}`);
    const vals = it.value.items.map((x) => {
      if (x.kind !== 'scalar')
        throw bad(`${where}: ${what}: "${it.key}" values must be strings, numbers or booleans at line ${x.line}`);
      return x.value;
    });
    const key = it.key.toLowerCase();
    // Vault ignores the values of "*" (docs: "the only value that can be used with the * parameter is []"):
    // values that would be stored and ignored are refused instead.
    if (key === '*' && vals.length > 0)
      throw bad(`${where}: ${what}: the only value "*" can take is [] (line ${it.line})`);
    // Keys are compared lower-cased (vault/policy.go); two spellings of one key merge their values.
    out[key] = key in out ? [...out[key]!, ...vals] : vals;
  }
  return out;
}

/** Vault (vault/policy.go validateParameter): a wildcard key must be exactly "*". */
function validateParameterKey(key: string, where: string, what: string, line: number): void {
  if (key.includes('*') && key !== '*')
    throw bad(`${where}: ${what}: parameter key "${key}" cannot contain non-tail wildcards (line ${line})`);
}

function duration(n: Node, where: string, key: string): number {
  if (n.kind !== 'scalar' || (typeof n.value !== 'string' && typeof n.value !== 'number'))
    throw bad(`${where}: ${key}: expected a duration at line ${n.line}`);
  try {
    return parseDuration(key, n.value);
  } catch {
    throw bad(`${where}: error parsing ${key}: invalid duration "${String(n.value)}" at line ${n.line}`);
  }
}

function legacyPolicy(p: string, where: string): string[] {
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
      throw bad(`${where}: invalid policy "${p}"`);
  }
}

function parsePathRule(rawPath: string, line: number, body: Node): PathRule {
  const where = `path "${rawPath}"`;
  if (body.kind !== 'object') throw bad(`${where}: expected a block at line ${line}`);
  // Templated paths are checked for balanced {{ }} here and resolved per request (acl.ts).
  let templated: boolean;
  try {
    templated = validateTemplate(rawPath);
  } catch (e) {
    throw bad(`failed to validate policy templating: ${where}: ${(e as Error).message} (line ${line})`);
  }
  const path = rawPath.startsWith('/') ? rawPath.slice(1) : rawPath;
  if (path.includes('+*')) throw bad(`path "${path}": invalid use of wildcards ('+*' is forbidden)`);
  const rule: PathRule = { path, capabilities: [] };
  if (templated) rule.templated = true;
  let caps: string[] = [];
  let legacy: string | undefined;
  for (const it of body.items) {
    if (!PATH_KEYS.has(it.key)) throw bad(`${where}: invalid key "${it.key}" on line ${it.line}`);
    if (ENTERPRISE_KEYS.has(it.key))
      throw bad(
        `${where}: "${it.key}" (line ${it.line}) is a Vault Enterprise feature keyhold does not enforce; remove it`,
      );
    const v = it.value;
    switch (it.key) {
      case 'comment':
        if (v.kind !== 'scalar' || typeof v.value !== 'string')
          throw bad(`${where}: comment must be a string at line ${v.line}`);
        break;
      case 'policy':
        if (v.kind !== 'scalar' || typeof v.value !== 'string')
          throw bad(`${where}: policy must be a string at line ${v.line}`);
        legacy = v.value;
        break;
      case 'capabilities':
        if (v.kind !== 'list') throw bad(`${where}: capabilities must be a list at line ${v.line}`);
        caps = strList(v, `${where}: capabilities`);
        break;
      case 'allowed_parameters':
        rule.allowedParameters = paramMap(v, where, 'allowed_parameters');
        break;
      case 'denied_parameters':
        rule.deniedParameters = paramMap(v, where, 'denied_parameters');
        break;
      case 'required_parameters': {
        const req = strList(v, `${where}: required_parameters`);
        for (const r of req)
          if (r.includes('*'))
            throw bad(`${where}: required_parameters: parameter key "${r}": wildcard is not permitted here`);
        if (req.length) rule.requiredParameters = req;
        break;
      }
      case 'min_wrapping_ttl':
        rule.minWrappingTtl = duration(v, where, 'min_wrapping_ttl');
        break;
      case 'max_wrapping_ttl':
        rule.maxWrappingTtl = duration(v, where, 'max_wrapping_ttl');
        break;
      case 'subscribe_event_types':
        rule.subscribeEventTypes = strList(v, `${where}: subscribe_event_types`);
        break;
    }
  }
  // Legacy `policy = "read"` adds to the capabilities; "deny" replaces them (vault/policy.go).
  if (legacy !== undefined) {
    const mapped = legacyPolicy(legacy, where);
    caps = legacy === 'deny' ? mapped : [...caps, ...mapped];
  }
  for (const c of caps) {
    if (!(CAPABILITIES as readonly string[]).includes(c)) throw bad(`${where}: invalid capability "${c}"`);
  }
  // A deny drops every other capability and parameter rule of the block (Vault stops there).
  if (caps.includes('deny')) return { path, capabilities: ['deny'], ...(templated ? { templated: true } : {}) };
  rule.capabilities = caps;
  if (rule.minWrappingTtl && rule.maxWrappingTtl && rule.maxWrappingTtl < rule.minWrappingTtl) {
    throw bad(`${where}: max_wrapping_ttl cannot be less than min_wrapping_ttl`);
  }
  return rule;
}

/** Parse policy text (HCL or JSON) into rules; throws 400 naming the key, line and cause. */
export function parsePolicy(name: string, text: string): Policy {
  const doc = parseDocument(text);
  if (doc.kind !== 'object') throw bad('does not contain a root object');
  const rules: PathRule[] = [];
  for (const it of doc.items) {
    if (!TOP_KEYS.has(it.key)) throw bad(`invalid key "${it.key}" on line ${it.line}`);
    // A top-level `name` is accepted and ignored: the name comes from the API path (vault/policy_store.go).
    if (it.key === 'name') {
      if (it.value.kind !== 'scalar' || typeof it.value.value !== 'string')
        throw bad(`name must be a string at line ${it.line}`);
      continue;
    }
    for (const e of pathEntries(it.value)) rules.push(parsePathRule(e.path, e.line, e.body));
  }
  const templated = rules.some((r) => r.templated);
  return { name, rules, raw: text, ...(templated ? { templated } : {}) };
}

/**
 * Vault's `sys/policies/acl` accepts a base64-encoded policy body ("to avoid string escaping"):
 * text that is valid standard base64 and decodes to UTF-8 is decoded first.
 */
export function decodePolicyText(text: string): string {
  const t = text.trim();
  if (t.length === 0 || t.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(t)) return text;
  try {
    // Fatal decoding: bytes that are not UTF-8 mean the text was not a base64-encoded policy.
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(t, 'base64'));
  } catch {
    return text;
  }
}

/** Vault's default policy (vault/policy_store.go), attached to every non-root token unless `no_default_policy`. */
export const DEFAULT_POLICY = `
# Allow tokens to look up their own properties
path "auth/token/lookup-self" {
    capabilities = ["read"]
}

# Allow tokens to renew themselves
path "auth/token/renew-self" {
    capabilities = ["update"]
}

# Allow tokens to revoke themselves
path "auth/token/revoke-self" {
    capabilities = ["update"]
}

# Allow a token to look up its own capabilities on a path
path "sys/capabilities-self" {
    capabilities = ["update"]
}

# Allow a token to look up its own entity by id or name
path "identity/entity/id/{{identity.entity.id}}" {
  capabilities = ["read"]
}
path "identity/entity/name/{{identity.entity.name}}" {
  capabilities = ["read"]
}


# Allow a token to look up its resultant ACL from all policies. This is useful
# for UIs. It is an internal path because the format may change at any time
# based on how the internal ACL features and capabilities change.
path "sys/internal/ui/resultant-acl" {
    capabilities = ["read"]
}

# Allow a token to renew a lease via lease_id in the request body; old path for
# old clients, new path for newer
path "sys/renew" {
    capabilities = ["update"]
}
path "sys/leases/renew" {
    capabilities = ["update"]
}

# Allow looking up lease properties. This requires knowing the lease ID ahead
# of time and does not divulge any sensitive information.
path "sys/leases/lookup" {
    capabilities = ["update"]
}

# Allow a token to manage its own cubbyhole
path "cubbyhole/*" {
    capabilities = ["create", "read", "update", "delete", "list"]
}

# Allow a token to wrap arbitrary values in a response-wrapping token
path "sys/wrapping/wrap" {
    capabilities = ["update"]
}

# Allow a token to look up the creation time and TTL of a given
# response-wrapping token
path "sys/wrapping/lookup" {
    capabilities = ["update"]
}

# Allow a token to unwrap a response-wrapping token. This is a convenience to
# avoid client token swapping since this is also part of the response wrapping
# policy.
path "sys/wrapping/unwrap" {
    capabilities = ["update"]
}

# Allow general purpose tools
path "sys/tools/hash" {
    capabilities = ["update"]
}
path "sys/tools/hash/*" {
    capabilities = ["update"]
}
path "sys/tools/random" {
    capabilities = ["update"]
}
path "sys/tools/random/*" {
    capabilities = ["update"]
}

# Allow checking the status of a Control Group request if the user has the
# accessor
path "sys/control-group/request" {
    capabilities = ["update"]
}

# Allow a token to make requests to the Authorization Endpoint for OIDC providers.
path "identity/oidc/provider/+/authorize" {
    capabilities = ["read", "update"]
}
`;

/** Name of the fixed policy of response-wrapping tokens (vault/policy_store.go). */
export const RESPONSE_WRAPPING_POLICY_NAME = 'response-wrapping';

/** The response-wrapping policy: a wrapping token may only read its cubbyhole and unwrap. */
export const RESPONSE_WRAPPING_POLICY = `
path "cubbyhole/response" {
    capabilities = ["create", "read"]
}

path "sys/wrapping/unwrap" {
    capabilities = ["update"]
}
`;

/** Policies no API call may change (Vault's immutablePolicies). */
const IMMUTABLE = new Set(['root', RESPONSE_WRAPPING_POLICY_NAME, 'control-group']);
/** Policies no token may be given by a caller (Vault's nonAssignablePolicies). */
export const NON_ASSIGNABLE_POLICIES: readonly string[] = [RESPONSE_WRAPPING_POLICY_NAME, 'control-group'];

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
  /**
   * `onInvalid` hears of a stored policy that no longer parses (written by an older keyhold that
   * accepted keys it then ignored): that policy grants nothing until rewritten (fail closed), its
   * text stays readable so an operator can fix it.
   */
  constructor(
    private readonly storage: Storage,
    private readonly onInvalid: (name: string, reason: string) => void = () => {},
  ) {}

  /** Policy by name (`root`, `default` and `response-wrapping` are built in; default may be overwritten). */
  async get(nameIn: string): Promise<Policy | null> {
    const name = policyKey(nameIn);
    if (name === 'root') return { name: 'root', rules: [], raw: '' };
    const cached = this.cache.get(name);
    if (cached) return cached;
    const gen = this.generation;
    let text: string | null;
    if (name === RESPONSE_WRAPPING_POLICY_NAME) text = RESPONSE_WRAPPING_POLICY;
    else {
      const rec = await getJSON<{ raw: string }>(this.storage, `policy/${name}`);
      text = rec?.raw ?? (name === 'default' ? DEFAULT_POLICY : null);
    }
    if (text === null) return null;
    let p: Policy;
    try {
      p = parsePolicy(name, text);
    } catch (e) {
      this.onInvalid(name, (e as Error).message);
      p = { name, rules: [], raw: text };
    }
    // A load that overlapped an invalidation (another node changed policies) is not cached.
    if (gen === this.generation) this.cache.set(name, p);
    return p;
  }
  /** Create or replace a policy from HCL or JSON text (nothing is stored when it does not parse). */
  async put(nameIn: string, text: string): Promise<Policy> {
    const name = policyKey(nameIn);
    if (IMMUTABLE.has(name)) throw invalid(`cannot update "${name}" policy`);
    const p = parsePolicy(name, text);
    await putJSON(this.storage, `policy/${name}`, { raw: text });
    this.cache.set(name, p);
    return p;
  }
  /** Delete a policy (root, default and response-wrapping cannot be deleted). */
  async delete(nameIn: string): Promise<void> {
    const name = policyKey(nameIn);
    if (name === 'default') throw invalid('cannot delete "default" policy');
    if (IMMUTABLE.has(name)) throw invalid(`cannot delete "${name}" policy`);
    await this.storage.delete(`policy/${name}`);
    this.cache.delete(name);
  }
  /** Names of all assignable policies, including `default` and `root`. */
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
