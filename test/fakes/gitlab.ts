/**
 * GitLab CI/CD variables fake, written from GitLab's REST API v4 documentation (project_level_variables,
 * group_level_variables, personal/project/group access tokens, rest/index pagination, rate limits):
 * - auth by `PRIVATE-TOKEN` (or `Authorization: Bearer`): unknown or expired token 401; a token
 *   without the `api` scope 403 insufficient_scope; a project or group token outside its resource
 *   404 "Project Not Found" / "Group Not Found", as GitLab hides what the token cannot see;
 * - keys: [A-Za-z0-9_], 1-255 characters; a key taken in the same environment scope is
 *   400 {"message":{"key":["(KEY) has already been taken"]}};
 * - masked values: single line, no spaces, >= 8 characters, Base64 alphabet plus @ : . ~,
 *   else 400 {"message":{"value":["is invalid"]}}; values at most 10,000 characters;
 * - update/delete/get by key, with `filter[environment_scope]`; without it, a key present in several
 *   scopes is 409 (GitLab asks for the filter);
 * - list pagination: page/per_page (max 100), X-Page, X-Per-Page, X-Next-Page, X-Total, X-Total-Pages, Link;
 * - rate limit (`rateLimit` requests per window, or `throttleNext` requests): 429 "Retry later" with Retry-After and RateLimit-* headers.
 */
import { randomBytes } from 'node:crypto';
import { FakeProvider, jsonBody, type FakeReply, type FakeRequest } from './fake-server.js';

/** A stored variable. */
export interface GitlabVariable {
  key: string;
  value: string;
  variable_type: string;
  protected: boolean;
  masked: boolean;
  raw: boolean;
  environment_scope: string;
  description: string | null;
}

interface Token {
  scopes: string[];
  /** A project or group access token only sees its own resource ("projects/42", "groups/7"). */
  resource?: string;
}

const KEY = /^[A-Za-z0-9_]{1,255}$/;
const MASKABLE = /^[A-Za-z0-9+/=@:.~_-]{8,}$/;

export class GitlabFake extends FakeProvider {
  readonly projectId = 42;
  readonly projectPath = 'acme/app';
  readonly groupId = 7;
  readonly groupPath = 'acme';
  readonly token = 'glpat-' + randomBytes(10).toString('hex');
  readonly readOnlyToken = 'glpat-' + randomBytes(10).toString('hex');
  readonly otherProjectToken = 'glpat-' + randomBytes(10).toString('hex');
  readonly tokens = new Map<string, Token>();
  /** Variables by owner ("projects/42", "groups/7"). */
  readonly vars = new Map<string, GitlabVariable[]>([
    ['projects/42', []],
    ['groups/7', []],
  ]);
  /** Requests allowed per window before 429 (Infinity: no limit), and the window. */
  rateLimit = Infinity;
  windowMs = 1000;
  private windowStart = 0;
  private windowCount = 0;
  throttled = 0;
  /** The next this many requests are answered 429 whatever the window (a burst elsewhere used the quota). */
  throttleNext = 0;
  /** Successful creates and updates per variable key (any owner and scope): how often each key was written. */
  readonly writes = new Map<string, number>();

  constructor() {
    super();
    this.tokens.set(this.token, { scopes: ['api'] });
    this.tokens.set(this.readOnlyToken, { scopes: ['read_api'] });
    this.tokens.set(this.otherProjectToken, { scopes: ['api'], resource: 'projects/99' });
  }

  /** Variables of an owner. */
  list(owner: 'projects/42' | 'groups/7'): GitlabVariable[] {
    return this.vars.get(owner)!;
  }

  /** A variable's value by key (and scope, default "*"). */
  valueOf(key: string, owner: 'projects/42' | 'groups/7' = 'projects/42', scope = '*'): string | undefined {
    return this.list(owner).find((v) => v.key === key && v.environment_scope === scope)?.value;
  }

  /** Successful creates and updates of `key` so far. */
  writesOf(key: string): number {
    return this.writes.get(key) ?? 0;
  }

  private noteWrite(key: string): void {
    this.writes.set(key, this.writesOf(key) + 1);
  }

  private ownerOf(kind: string, id: string): string | null {
    const decoded = decodeURIComponent(id);
    if (kind === 'projects' && (decoded === String(this.projectId) || decoded === this.projectPath))
      return `projects/${this.projectId}`;
    if (kind === 'groups' && (decoded === String(this.groupId) || decoded === this.groupPath))
      return `groups/${this.groupId}`;
    return null;
  }

  protected handle(r: FakeRequest): FakeReply {
    const now = Date.now();
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now;
      this.windowCount = 0;
    }
    if (++this.windowCount > this.rateLimit || this.throttleNext > 0) {
      if (this.throttleNext > 0) this.throttleNext--;
      this.throttled++;
      const reset = Math.ceil((this.windowStart + this.windowMs) / 1000);
      return {
        status: 429,
        text: 'Retry later',
        headers: {
          'Retry-After': '1',
          'RateLimit-Limit': String(this.rateLimit),
          'RateLimit-Remaining': '0',
          'RateLimit-Reset': String(reset),
          'RateLimit-Observed': String(this.windowCount),
        },
      };
    }
    const auth =
      r.headers['private-token'] ??
      (String(r.headers.authorization ?? '').startsWith('Bearer ')
        ? String(r.headers.authorization).slice(7)
        : undefined);
    const tok = typeof auth === 'string' ? this.tokens.get(auth) : undefined;
    if (!tok) return { status: 401, json: { message: '401 Unauthorized' } };
    const m = /^\/api\/v4\/(projects|groups)\/([^/]+)\/variables(?:\/([^/]+))?$/.exec(r.url.pathname);
    if (!m) return { status: 404, json: { error: '404 Not Found' } };
    const kind = m[1]!;
    const owner = this.ownerOf(kind, m[2]!);
    const notFound = { status: 404, json: { message: `404 ${kind === 'projects' ? 'Project' : 'Group'} Not Found` } };
    if (!owner || (tok.resource && tok.resource !== owner)) return notFound;
    const write = r.method !== 'GET';
    if (!tok.scopes.includes('api') && (write || !tok.scopes.includes('read_api'))) {
      return {
        status: 403,
        json: {
          error: 'insufficient_scope',
          error_description: 'The request requires higher privileges than provided by the access token.',
          scope: 'api',
        },
      };
    }
    const list = this.vars.get(owner)!;
    const key = m[3] === undefined ? undefined : decodeURIComponent(m[3]);
    if (key === undefined) {
      if (r.method === 'GET') return this.page(r, list);
      if (r.method === 'POST') return this.create(r, list);
      return { status: 405, json: { message: '405 Method Not Allowed' } };
    }
    const scope = r.url.searchParams.get('filter[environment_scope]');
    const matching = list.filter((v) => v.key === key && (scope === null || v.environment_scope === scope));
    if (matching.length === 0) return { status: 404, json: { message: '404 Variable Not Found' } };
    if (matching.length > 1)
      return {
        status: 409,
        json: {
          message: "There are multiple variables with provided parameters. Please use 'filter[environment_scope]'",
        },
      };
    const v = matching[0]!;
    if (r.method === 'GET') return { status: 200, json: v };
    if (r.method === 'DELETE') {
      list.splice(list.indexOf(v), 1);
      return { status: 204 };
    }
    if (r.method === 'PUT') {
      const b = jsonBody(r) ?? {};
      const next: GitlabVariable = { ...v, ...pick(b) };
      next.key = v.key;
      const bad = invalidOf(next);
      if (bad) return bad;
      if (
        next.environment_scope !== v.environment_scope &&
        list.some((o) => o !== v && o.key === v.key && o.environment_scope === next.environment_scope)
      )
        return taken(v.key);
      Object.assign(v, next);
      this.noteWrite(v.key);
      return { status: 200, json: v };
    }
    return { status: 405, json: { message: '405 Method Not Allowed' } };
  }

  private create(r: FakeRequest, list: GitlabVariable[]): FakeReply {
    const b = jsonBody(r);
    if (!b || typeof b.key !== 'string') return { status: 400, json: { error: 'key is missing' } };
    if (typeof b.value !== 'string') return { status: 400, json: { error: 'value is missing' } };
    const v: GitlabVariable = {
      key: b.key,
      value: '',
      variable_type: 'env_var',
      protected: false,
      masked: false,
      raw: false,
      environment_scope: '*',
      description: null,
      ...pick(b),
    };
    const bad = invalidOf(v);
    if (bad) return bad;
    if (list.some((o) => o.key === v.key && o.environment_scope === v.environment_scope)) return taken(v.key);
    list.push(v);
    this.noteWrite(v.key);
    return { status: 201, json: v };
  }

  private page(r: FakeRequest, list: GitlabVariable[]): FakeReply {
    const per = Math.min(100, Math.max(1, Number(r.url.searchParams.get('per_page') ?? 20) || 20));
    const page = Math.max(1, Number(r.url.searchParams.get('page') ?? 1) || 1);
    const pages = Math.max(1, Math.ceil(list.length / per));
    const items = list.slice((page - 1) * per, page * per);
    const link = (p: number, rel: string) => `<${this.url}${r.url.pathname}?page=${p}&per_page=${per}>; rel="${rel}"`;
    const links = [...(page < pages ? [link(page + 1, 'next')] : []), link(1, 'first'), link(pages, 'last')];
    return {
      status: 200,
      json: items,
      headers: {
        'X-Page': String(page),
        'X-Per-Page': String(per),
        'X-Next-Page': page < pages ? String(page + 1) : '',
        'X-Total': String(list.length),
        'X-Total-Pages': String(pages),
        Link: links.join(', '),
      },
    };
  }
}

function pick(b: Record<string, unknown>): Partial<GitlabVariable> {
  const out: Partial<GitlabVariable> = {};
  if (typeof b.key === 'string') out.key = b.key;
  if (typeof b.value === 'string') out.value = b.value;
  if (typeof b.variable_type === 'string') out.variable_type = b.variable_type;
  for (const k of ['protected', 'masked', 'raw'] as const)
    if (b[k] !== undefined) out[k] = b[k] === true || b[k] === 'true';
  if (typeof b.environment_scope === 'string') out.environment_scope = b.environment_scope;
  if (typeof b.description === 'string') out.description = b.description;
  return out;
}

function taken(key: string): FakeReply {
  return { status: 400, json: { message: { key: [`(${key}) has already been taken`] } } };
}

function invalidOf(v: GitlabVariable): FakeReply | null {
  if (!KEY.test(v.key))
    return { status: 400, json: { message: { key: ["can contain only letters, digits and '_'."] } } };
  if (v.variable_type !== 'env_var' && v.variable_type !== 'file')
    return { status: 400, json: { error: 'variable_type does not have a valid value' } };
  if (v.value.length > 10_000)
    return { status: 400, json: { message: { value: ['is too long (maximum is 10000 characters)'] } } };
  if (v.masked && !MASKABLE.test(v.value)) return { status: 400, json: { message: { value: ['is invalid'] } } };
  return null;
}
