/**
 * hosting-project: Vercel project environment variables (reference sync-wire.md 1.5.6 and 3.5).
 * Upsert with `POST /v10/projects/{id}/env?upsert=true`, targets from `deployment_environments`,
 * `teamId` query when a team is set; unsync finds the variable's id in the list and deletes it.
 */
import { f } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import { SyncFailure } from '../failure.js';
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

/** Deployment environments Vercel accepts as targets. */
export const VERCEL_TARGETS = ['development', 'preview', 'production'] as const;

/**
 * Targets the destination had before `deployment_environments` last changed (kept by the service in
 * `connection.previous_deployment_environments`, not a user field): variables keyhold wrote there
 * are moved, not duplicated.
 */
export function previousTargets(dest: DestinationRecord): string[] {
  const v = dest.connection.previous_deployment_environments;
  return Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : [];
}

function vercelDetail(b: Record<string, unknown> | null): string {
  const e = (b?.error ?? {}) as { code?: string; message?: string };
  return [e.code, e.message].filter(Boolean).join(' ');
}

class VercelConnector implements Connector {
  private readonly base: string;
  constructor(
    private readonly dest: DestinationRecord,
    private readonly deps: ConnectorDeps,
  ) {
    this.base = baseUrl(dest.connection.endpoint_url, 'https://api.vercel.com');
  }

  private url(path: string, query: Record<string, string> = {}): string {
    const q = new URLSearchParams(query);
    const team = this.dest.connection.team_id;
    if (team) q.set('teamId', String(team));
    const s = q.toString();
    return `${this.base}${path}${s ? '?' + s : ''}`;
  }

  private send(method: string, url: string, body: unknown, what: string, signal: AbortSignal): Promise<HttpReply> {
    return this.deps.http.send(
      {
        method,
        url,
        headers: {
          Authorization: `Bearer ${String(this.dest.connection.access_token)}`,
          Accept: 'application/json',
          ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        what,
      },
      signal,
    );
  }

  private project(): string {
    return encodeURIComponent(String(this.dest.connection.project_id));
  }

  /**
   * Upsert `name` on the destination's targets. Vercel's v10 upsert refuses (400 ENV_CONFLICT) a
   * variable whose existing targets differ from the requested ones, and creates a second variable
   * when they do not overlap, so after `deployment_environments` changed (issue 19) keyhold moves its
   * variables: it finds them by key and PATCHes one to the new targets and value (v9 edit), deleting
   * the others of that key on the old or new targets. Until the targets change, a sync is one call.
   */
  async put(name: string, value: string, signal: AbortSignal, opts: PutOptions = {}): Promise<void> {
    const target = this.dest.connection.deployment_environments as string[];
    const moved = previousTargets(this.dest).length > 0;
    if (moved && !opts.fresh && (await this.move(name, value, target, signal))) return;
    const r = await this.send(
      'POST',
      this.url(`/v10/projects/${this.project()}/env`, { upsert: 'true' }),
      { key: name, value, type: 'encrypted', target },
      'upsert env',
      signal,
    );
    const conflict = (code: string | undefined) => code === 'ENV_CONFLICT' || code === 'ENV_ALREADY_EXISTS';
    if (r.status === 400 && conflict((jsonOf(r)?.error as { code?: string } | undefined)?.code)) {
      if (await this.move(name, value, target, signal)) return;
    }
    if (!ok(r)) throw failureOf(r, 'upsert env', vercelDetail, this.deps.now());
    const failed = jsonOf(r)?.failed;
    if (Array.isArray(failed) && failed.length > 0) {
      const e = (failed[0] as { error?: { code?: string; message?: string } }).error;
      if (conflict(e?.code) && (await this.move(name, value, target, signal))) return;
      throw new SyncFailure(
        'CLIENT_SIDE_ERROR',
        `upsert env: refused ${[e?.code, e?.message].filter(Boolean).join(' ')}`.slice(0, 300),
      );
    }
  }

  /** Move the variables named `name` to `target` with `value`; false when there is none to move. */
  private async move(name: string, value: string, target: string[], signal: AbortSignal): Promise<boolean> {
    const list = await this.send('GET', this.url(`/v10/projects/${this.project()}/env`), undefined, 'list env', signal);
    if (!ok(list)) throw failureOf(list, 'list env', vercelDetail, this.deps.now());
    const ours = new Set([...target, ...previousTargets(this.dest)]);
    const same = (
      (jsonOf(list)?.envs ?? []) as Array<{ id?: string; key?: string; target?: string[] | string }>
    ).filter((e) => e.key === name && typeof e.id === 'string' && [e.target ?? []].flat().some((t) => ours.has(t)));
    if (same.length === 0) return false;
    const [keep, ...rest] = same;
    // Delete the others first: the PATCH below would overlap their targets.
    for (const e of rest) {
      const d = await this.send(
        'DELETE',
        this.url(`/v9/projects/${this.project()}/env/${encodeURIComponent(e.id!)}`),
        undefined,
        'delete env',
        signal,
      );
      if (d.status !== 404 && !ok(d)) throw failureOf(d, 'delete env', vercelDetail, this.deps.now());
    }
    const r = await this.send(
      'PATCH',
      this.url(`/v9/projects/${this.project()}/env/${encodeURIComponent(keep!.id!)}`),
      { value, target, type: 'encrypted' },
      'move env',
      signal,
    );
    if (r.status === 404) return false; // deleted meanwhile: create it instead
    if (!ok(r)) throw failureOf(r, 'move env', vercelDetail, this.deps.now());
    return true;
  }

  async remove(name: string, signal: AbortSignal): Promise<void> {
    const list = await this.send('GET', this.url(`/v10/projects/${this.project()}/env`), undefined, 'list env', signal);
    if (list.status === 404) return;
    if (!ok(list)) throw failureOf(list, 'list env', vercelDetail, this.deps.now());
    const envs = (jsonOf(list)?.envs ?? []) as Array<{ id?: string; key?: string }>;
    for (const e of envs) {
      if (e.key !== name || typeof e.id !== 'string') continue;
      const r = await this.send(
        'DELETE',
        this.url(`/v9/projects/${this.project()}/env/${encodeURIComponent(e.id)}`),
        undefined,
        'delete env',
        signal,
      );
      if (r.status !== 404 && !ok(r)) throw failureOf(r, 'delete env', vercelDetail, this.deps.now());
    }
  }

  close(): void {}
}

/** The hosting-project destination type. */
export const hostingProject: DestinationTypeDef = {
  type: 'hosting-project',
  provider: 'Vercel project environment variables',
  fields: {
    access_token: f.string('Token permitted to manage the project environment variables').sensitive(),
    project_id: f.string('Project id (or name) where variables are managed'),
    team_id: f.string('Team id (sent as teamId)'),
    deployment_environments: f.strings(`Targets: a list or comma-separated string of ${VERCEL_TARGETS.join(', ')}`),
    endpoint_url: endpointField,
  },
  required: ['access_token', 'project_id', 'deployment_environments'],
  immutable: ['project_id'],
  defaults: { team_id: '', endpoint_url: '' },
  defaultGranularity: 'secret-key',
  defaultTemplates: {
    'secret-path': 'VAULT_{{ .MountAccessor | uppercase }}_{{ .SecretPath | uppercase }}',
    'secret-key': 'VAULT_{{ .MountAccessor | uppercase }}_{{ .SecretPath | uppercase }}_{{ .SecretKey | uppercase }}',
  },
  customTags: false,
  check(conn) {
    const envs = (conn.deployment_environments as string[]).map((s) => s.trim()).filter((s) => s !== '');
    if (envs.length === 0)
      throw invalid('deployment_environments', `must name at least one of ${VERCEL_TARGETS.join(', ')}`);
    for (const e of envs)
      if (!(VERCEL_TARGETS as readonly string[]).includes(e))
        throw invalid('deployment_environments', `must be among ${VERCEL_TARGETS.join(', ')}, got "${e.slice(0, 40)}"`);
    conn.deployment_environments = [...new Set(envs)];
    if (!/^[\w.-]{1,128}$/.test(String(conn.project_id))) throw invalid('project_id', 'must be a project id or name');
    if (conn.team_id && !/^[\w.-]{1,128}$/.test(String(conn.team_id))) throw invalid('team_id', 'must be a team id');
    checkUrlField(conn, 'endpoint_url');
  },
  onUpdate(prev, next) {
    const was = (prev.deployment_environments as string[]) ?? [];
    const now = next.deployment_environments as string[];
    if (was.length === now.length && was.every((t) => now.includes(t))) return false;
    // New targets: remember the old ones so the next sync moves the variables there (issue 19).
    next.previous_deployment_environments = [
      ...new Set([...((prev.previous_deployment_environments as string[] | undefined) ?? []), ...was]),
    ];
    return true;
  },
  connect: (dest, deps) => new VercelConnector(dest, deps),
};
