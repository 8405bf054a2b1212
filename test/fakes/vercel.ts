/**
 * Vercel project environment variables fake (reference sync-wire.md 3.5 and 4.2): bearer token
 * required; the project is visible only with its team's `teamId`; POST with and without
 * `upsert=true` (conflict without it); key regex, `type`, `target` subset with `sensitive` refused for
 * development; list returns ids; PATCH/DELETE by id; 404 on an unknown id. An upsert of a key whose
 * existing variable has other (overlapping) targets is refused 400 ENV_CONFLICT, as the v10 API does;
 * targets that do not overlap make a second variable of the same key; a PATCH whose targets would
 * overlap another variable of the key is refused the same way.
 */
import { randomBytes } from 'node:crypto';
import { FakeProvider, bearerOf, jsonBody, type FakeReply, type FakeRequest } from './fake-server.js';

/** One stored environment variable. */
export interface VercelEnv {
  id: string;
  key: string;
  value: string;
  type: string;
  target: string[];
  createdAt: number;
  updatedAt: number;
}

const verr = (status: number, code: string, message: string): FakeReply => ({
  status,
  json: { error: { code, message } },
});
const TARGETS = new Set(['production', 'preview', 'development']);
const TYPES = new Set(['encrypted', 'sensitive', 'plain', 'system', 'secret']);

/** Vercel fake for one project in one team. */
export class VercelFake extends FakeProvider {
  readonly token = randomBytes(12).toString('hex');
  readonly projectId = 'prj_' + randomBytes(8).toString('hex');
  readonly teamId = 'team_' + randomBytes(8).toString('hex');
  readonly envs: VercelEnv[] = [];

  /** Value of a variable by key, or undefined. */
  valueOf(key: string): string | undefined {
    return this.envs.find((e) => e.key === key)?.value;
  }
  targetsOf(key: string): string[] | undefined {
    return this.envs.find((e) => e.key === key)?.target;
  }
  /** Every variable of a key (Vercel allows one per disjoint set of targets). */
  allOf(key: string): VercelEnv[] {
    return this.envs.filter((e) => e.key === key);
  }

  protected handle(r: FakeRequest): FakeReply {
    if (bearerOf(r) !== this.token) return verr(403, 'forbidden', 'Not authorized');
    const m = /^\/v(\d+)\/projects\/([^/]+)\/env(?:\/([^/]+))?$/.exec(r.url.pathname);
    if (!m) return verr(404, 'not_found', 'no such path');
    if (decodeURIComponent(m[2]!) !== this.projectId || r.url.searchParams.get('teamId') !== this.teamId)
      return verr(404, 'not_found', 'Project not found');
    const id = m[3] ? decodeURIComponent(m[3]) : undefined;
    if (!id && r.method === 'GET')
      return {
        status: 200,
        json: { envs: this.envs.map(({ value: _v, ...rest }) => ({ ...rest, decrypted: false })) },
      };
    if (!id && r.method === 'POST') return this.create(r);
    if (id) {
      const i = this.envs.findIndex((e) => e.id === id);
      if (i === -1) return verr(404, 'not_found', 'Environment Variable not found');
      if (r.method === 'DELETE') {
        const [gone] = this.envs.splice(i, 1);
        return { status: 200, json: { ...gone, value: undefined } };
      }
      if (r.method === 'PATCH') {
        const b = jsonBody(r) ?? {};
        const e = this.envs[i]!;
        if (typeof b.value === 'string') e.value = b.value;
        if (b.target !== undefined) {
          const t = b.target;
          if (!Array.isArray(t) || t.length === 0 || !t.every((x) => typeof x === 'string' && TARGETS.has(x)))
            return verr(400, 'invalid_target', 'invalid target');
          if (this.envs.some((o) => o !== e && o.key === e.key && o.target.some((x) => t.includes(x))))
            return verr(400, 'ENV_CONFLICT', `A variable with the name ${e.key} already exists for one of the targets`);
          e.target = t as string[];
        }
        if (typeof b.type === 'string') {
          if (!TYPES.has(b.type)) return verr(400, 'invalid_type', 'invalid type');
          e.type = b.type;
        }
        e.updatedAt = Date.now();
        return { status: 200, json: { ...e, value: undefined } };
      }
    }
    return verr(405, 'method_not_allowed', 'method not allowed');
  }

  private create(r: FakeRequest): FakeReply {
    const upsert = r.url.searchParams.get('upsert') === 'true';
    let items: unknown;
    try {
      items = JSON.parse(r.text);
    } catch {
      return verr(400, 'bad_request', 'Invalid JSON');
    }
    const list = (Array.isArray(items) ? items : [items]) as Array<Record<string, unknown>>;
    const created: unknown[] = [];
    const failed: unknown[] = [];
    for (const it of list) {
      const key = it.key;
      if (typeof key !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
        return verr(
          400,
          'invalid_key',
          'The name of your Environment Variable must begin with a letter and contain only letters, digits and underscores',
        );
      if (typeof it.value !== 'string') return verr(400, 'invalid_value', 'value is required');
      if (typeof it.type !== 'string' || !TYPES.has(it.type)) return verr(400, 'invalid_type', 'invalid type');
      const target = it.target;
      if (
        !Array.isArray(target) ||
        target.length === 0 ||
        !target.every((t) => typeof t === 'string' && TARGETS.has(t))
      )
        return verr(400, 'invalid_target', 'invalid target');
      if (it.type === 'sensitive' && target.includes('development'))
        return verr(400, 'invalid_target', 'sensitive variables cannot target development');
      const clash = this.envs.find((e) => e.key === key && e.target.some((t) => target.includes(t)));
      if (clash && !upsert) {
        failed.push({
          error: {
            code: 'ENV_ALREADY_EXISTS',
            message: `A variable with the name ${key} already exists for the target`,
          },
        });
        continue;
      }
      const now = Date.now();
      const sameTargets = (a: string[], b: string[]) => a.length === b.length && a.every((t) => b.includes(t));
      if (clash && !sameTargets(clash.target, target as string[])) {
        return verr(
          400,
          'ENV_CONFLICT',
          `The environment variable ${key} already exists with different targets (${clash.target.join(', ')})`,
        );
      }
      if (clash) {
        clash.value = it.value;
        clash.target = target as string[];
        clash.type = it.type;
        clash.updatedAt = now;
        created.push({ ...clash, value: undefined });
      } else {
        const e: VercelEnv = {
          id: randomBytes(8).toString('hex'),
          key,
          value: it.value,
          type: it.type,
          target: target as string[],
          createdAt: now,
          updatedAt: now,
        };
        this.envs.push(e);
        created.push({ ...e, value: undefined });
      }
    }
    return { status: 201, json: { created: Array.isArray(items) ? created : created[0], failed } };
  }
}
