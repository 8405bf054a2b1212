/**
 * gitlab: GitLab CI/CD variables of a project or a group (issue 31 part 4), through GitLab's REST
 * API v4 (docs.gitlab.com/api/project_level_variables, group_level_variables): create with
 * POST /projects/:id/variables (or /groups/:id/variables), update with PUT .../variables/:key and
 * delete with DELETE .../variables/:key, each update and delete filtered by the destination's
 * `environment_scope` (`filter[environment_scope]`) so variables of other scopes with the same key
 * are left alone. Authentication with `PRIVATE-TOKEN` (project, group or personal access token with
 * the `api` scope). 429 answers (RateLimit-* and Retry-After headers) hold the destination as other
 * connectors' rate limits do. A value GitLab could not mask is refused before sending.
 */
import { f } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import { SyncFailure, failureFromStatus } from '../failure.js';
import { failureOf, jsonOf, ok, type HttpReply } from '../http-client.js';
import {
  baseUrl,
  checkUrlField,
  endpointField,
  type Connector,
  type ConnectorDeps,
  type DestinationTypeDef,
  type PutOptions,
} from './common.js';
import type { DestinationRecord } from '../types.js';

/** GitLab's documented masking requirements, each with its reason (the first one broken is named). */
const MASK_RULES: Array<[RegExp | ((v: string) => boolean), string]> = [
  [(v) => !/[\r\n]/.test(v), 'a masked value must be a single line'],
  [(v) => !/\s/.test(v), 'a masked value must not contain spaces'],
  [(v) => v.length >= 8, 'a masked value must be 8 characters or longer'],
  [
    /^[A-Za-z0-9+/=@:.~_-]*$/,
    'a masked value may only use the Base64 alphabet (RFC 4648, standard or URL-safe) and @ : . ~',
  ],
];

/** Why GitLab would refuse to mask `value` (its CI/CD variables documentation), or null. */
export function maskProblem(value: string): string | null {
  for (const [rule, why] of MASK_RULES) if (!(typeof rule === 'function' ? rule(value) : rule.test(value))) return why;
  return null;
}

/** GitLab's error detail: `message` (a string or a map of field -> messages) or `error`/`error_description`. */
function gitlabDetail(b: Record<string, unknown> | null): string {
  if (!b) return '';
  const m = b.message;
  if (typeof m === 'string') return m;
  if (m && typeof m === 'object') {
    return Object.entries(m as Record<string, unknown>)
      .map(([k, v]) => `${k} ${[v].flat().join(', ')}`)
      .join('; ');
  }
  return [b.error, b.error_description].filter((x) => typeof x === 'string').join(' ');
}

class GitlabConnector implements Connector {
  private readonly api: string;
  private readonly owner: string;
  constructor(
    private readonly dest: DestinationRecord,
    private readonly deps: ConnectorDeps,
  ) {
    const c = dest.connection;
    this.api = c.endpoint_url ? baseUrl(c.endpoint_url, '') : `${baseUrl(c.base_url, 'https://gitlab.com')}/api/v4`;
    this.owner = c.project_id
      ? `projects/${encodeURIComponent(String(c.project_id))}`
      : `groups/${encodeURIComponent(String(c.group_id))}`;
  }

  private scope(): string {
    return String(this.dest.connection.environment_scope || '*');
  }

  private url(key?: string): string {
    const base = `${this.api}/${this.owner}/variables`;
    return key === undefined
      ? base
      : `${base}/${encodeURIComponent(key)}?${new URLSearchParams({ 'filter[environment_scope]': this.scope() })}`;
  }

  private send(method: string, url: string, body: unknown, what: string, signal: AbortSignal): Promise<HttpReply> {
    return this.deps.http.send(
      {
        method,
        url,
        headers: {
          'PRIVATE-TOKEN': String(this.dest.connection.access_token),
          Accept: 'application/json',
          ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        what,
      },
      signal,
    );
  }

  private failure(r: HttpReply, what: string): SyncFailure {
    // GitLab's 429 carries Retry-After; without it, RateLimit-Reset (Unix seconds) says when to come back.
    if (r.status === 429 && r.headers['retry-after'] === undefined) {
      const reset = Number(r.headers['ratelimit-reset']);
      if (Number.isFinite(reset) && reset > 0)
        return failureFromStatus(429, what, gitlabDetail(jsonOf(r)), Math.max(0, reset * 1000 - this.deps.now()), true);
    }
    return failureOf(r, what, gitlabDetail, this.deps.now());
  }

  private body(name: string, value: string): Record<string, unknown> {
    const c = this.dest.connection;
    return {
      key: name,
      value,
      variable_type: 'env_var',
      protected: Boolean(c.protected),
      masked: Boolean(c.masked),
      raw: Boolean(c.raw),
      environment_scope: this.scope(),
      description: 'Managed by keyhold secret sync',
    };
  }

  /**
   * Update the variable of this scope, or create it when there is none (a `fresh` name is created
   * first: one call); a create racing another ("has already been taken") falls back to the update.
   */
  async put(name: string, value: string, signal: AbortSignal, opts: PutOptions = {}): Promise<void> {
    if (this.dest.connection.masked) {
      const why = maskProblem(value);
      if (why)
        throw new SyncFailure(
          'CLIENT_SIDE_ERROR',
          `gitlab masking rule: ${why} (store the value base64-encoded, or set masked=false)`,
        );
    }
    const body = this.body(name, value);
    if (opts.fresh && (await this.create(body, signal))) return;
    const r = await this.send('PUT', this.url(name), body, 'update variable', signal);
    if (ok(r)) return;
    if (r.status !== 404 || /project|group/i.test(gitlabDetail(jsonOf(r)))) throw this.failure(r, 'update variable');
    if (!(await this.create(body, signal))) {
      const again = await this.send('PUT', this.url(name), body, 'update variable', signal);
      if (!ok(again)) throw this.failure(again, 'update variable');
    }
  }

  /** Create; false when the key exists in this scope already. */
  private async create(body: Record<string, unknown>, signal: AbortSignal): Promise<boolean> {
    const r = await this.send('POST', this.url(), body, 'create variable', signal);
    if (ok(r)) return true;
    if (r.status === 400 && /already been taken/i.test(gitlabDetail(jsonOf(r)))) return false;
    throw this.failure(r, 'create variable');
  }

  async remove(name: string, signal: AbortSignal): Promise<void> {
    const r = await this.send('DELETE', this.url(name), undefined, 'delete variable', signal);
    if (ok(r)) return;
    // 404 Variable Not Found: already gone (a missing project or group is an error).
    if (r.status === 404 && !/project|group/i.test(gitlabDetail(jsonOf(r)))) return;
    throw this.failure(r, 'delete variable');
  }

  close(): void {}
}

const ID = /^([1-9]\d{0,18}|[\w.-]+(\/[\w.-]+)*)$/;
const SCOPE = /^[\w*./${}:-]{1,255}$/;

/** The gitlab destination type. */
export const gitlab: DestinationTypeDef = {
  type: 'gitlab',
  provider: 'GitLab CI/CD variables',
  fields: {
    access_token: f.string('Project, group or personal access token with the api scope').sensitive(),
    project_id: f.string('Project id or full path (group/project); exactly one of project_id and group_id'),
    group_id: f.string('Group id or full path; exactly one of project_id and group_id'),
    base_url: f.string('GitLab instance (default https://gitlab.com); the API is <base_url>/api/v4'),
    environment_scope: f.string('Environments the variables apply to (default "*", all)'),
    protected: f.bool('Variables are only passed to pipelines on protected branches and tags'),
    masked: f.bool("Variables are masked in job logs (values must meet GitLab's masking rules)"),
    raw: f.bool('Variables are not expanded ($ in values is kept as is)'),
    endpoint_url: endpointField,
  },
  required: ['access_token'],
  immutable: ['project_id', 'group_id', 'base_url', 'environment_scope'],
  defaults: {
    project_id: '',
    group_id: '',
    base_url: '',
    environment_scope: '*',
    protected: false,
    masked: false,
    raw: false,
    endpoint_url: '',
  },
  defaultGranularity: 'secret-key',
  defaultTemplates: {
    'secret-path': 'VAULT_{{ .MountAccessor | uppercase }}_{{ .SecretPath | uppercase }}',
    'secret-key': 'VAULT_{{ .MountAccessor | uppercase }}_{{ .SecretPath | uppercase }}_{{ .SecretKey | uppercase }}',
  },
  customTags: false,
  check(conn) {
    const p = String(conn.project_id ?? '');
    const g = String(conn.group_id ?? '');
    if (!p && !g) throw invalid('project_id', 'one of project_id and group_id is required');
    if (p && g) throw invalid('group_id', 'give project_id or group_id, not both');
    if (p && !ID.test(p)) throw invalid('project_id', 'must be a numeric project id or a path such as group/project');
    if (g && !ID.test(g)) throw invalid('group_id', 'must be a numeric group id or a path such as parent/group');
    if (!SCOPE.test(String(conn.environment_scope || '*')))
      throw invalid('environment_scope', 'must be "*" or an environment name or wildcard (at most 255 characters)');
    checkUrlField(conn, 'base_url');
    checkUrlField(conn, 'endpoint_url');
  },
  onUpdate(prev, next) {
    // Changed flags apply to the variables already there: sync them again.
    return ['protected', 'masked', 'raw'].some((k) => Boolean(prev[k]) !== Boolean(next[k]));
  },
  connect: (dest, deps) => new GitlabConnector(dest, deps),
};
