/**
 * `sys/remount` and `sys/remount/status/:migration_id` (Vault 1.10+, vault/logical_system.go
 * handleRemount and handleRemountStatusCheck): move a secrets engine or an auth method to another
 * path with all its data. keyhold keeps a mount's records under its uuid, so the move is one change
 * of the mount table, done before the answer; the migration id and its status are still answered as
 * Vault answers them, so clients that poll the status work unchanged.
 */
import { randomUUID } from 'node:crypto';
import { invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { MountInfo } from '../../framework/context.js';

/** What the remount routes need of the core. */
export interface RemountParts {
  /** Move the mount at `from` to `to` (both normalised: "x/", "auth/y/"); returns the moved entry. */
  moveMount(from: string, to: string): Promise<MountInfo>;
  /** Every mount, secrets and auth (auth entries' paths start with "auth/"), internal ones included. */
  allMountPaths(): string[];
  /** The record of migrations answered by sys/remount/status. */
  readonly migrations: MigrationLog;
}

/** One migration as sys/remount/status shows it. */
export interface Migration {
  id: string;
  source: string;
  target: string;
  status: 'in-progress' | 'success' | 'failure';
  message?: string;
  at: number;
}

/** Migrations of this daemon, newest kept (Vault keeps its migration info in memory too). */
export class MigrationLog {
  private readonly byId = new Map<string, Migration>();
  constructor(private readonly keep = 100) {}
  start(source: string, target: string, now: number): Migration {
    const m: Migration = { id: randomUUID(), source, target, status: 'in-progress', at: now };
    this.byId.set(m.id, m);
    while (this.byId.size > this.keep) this.byId.delete(this.byId.keys().next().value!);
    return m;
  }
  get(id: string): Migration | undefined {
    return this.byId.get(id);
  }
}

/** Mount paths that are never moved, nor moved onto (Vault's protected mounts). */
const PROTECTED = ['sys/', 'cubbyhole/', 'identity/', 'auth/token/', 'audit/'];

/** "/secret" -> "secret/"; 400 naming the field for a path that cannot be a mount. */
export function remountPath(field: string, p: string): string {
  const s = p.replace(/^\/+/, '').replace(/\/+$/, '');
  if (s === '' || s.split('/').some((seg) => seg === '' || seg === '.' || seg === '..') || !/^[\w.\-/]+$/.test(s))
    throw invalid(field, `invalid mount path "${p}"`);
  return s + '/';
}

/**
 * Check a move as Vault does: both paths given, neither protected, auth stays auth, the source is a
 * mount, the target is free (not a mount, not inside one, not above one).
 */
export function checkRemount(from: string, to: string, mounts: readonly string[]): void {
  for (const [field, p] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (
      PROTECTED.some((x) => p === x || p.startsWith(x)) &&
      !(p.startsWith('auth/') && p !== 'auth/token/' && !p.startsWith('auth/token/'))
    ) {
      throw invalid(field, `cannot remount "${p}": it is a protected path`);
    }
    if (p === 'auth/') throw invalid(field, 'cannot remount "auth/": it is a protected path');
  }
  const fromAuth = from.startsWith('auth/');
  if (fromAuth && !to.startsWith('auth/')) throw invalid('to', `cannot remount auth mount to non-auth mount "${to}"`);
  if (!fromAuth && to.startsWith('auth/')) throw invalid('to', `cannot remount non-auth mount to auth mount "${to}"`);
  if (!mounts.includes(from)) throw invalid('from', `no matching mount at "${from}"`);
  for (const m of mounts)
    if (m === to || to.startsWith(m) || m.startsWith(to)) throw invalid('to', `path already in use at "${m}"`);
}

const route = routesFor<RemountParts & { clock: { now(): number } }>();

/** The remount routes (sudo, as Vault's sys/remount is root-protected). */
export const remountRoutes: AnyRoute[] = [
  route({
    path: 'remount',
    summary: 'Move a secrets engine or auth method to another path, with its data',
    fields: {
      from: f.string('Current path of the mount (auth methods: auth/<name>)').required(),
      to: f.string('New path').required(),
    },
    sudo: true,
    operations: {
      update: async ({ engine, data }) => {
        const from = remountPath('from', data.from);
        const to = remountPath('to', data.to);
        checkRemount(from, to, engine.allMountPaths());
        const m = engine.migrations.start(from, to, engine.clock.now());
        try {
          await engine.moveMount(from, to);
          m.status = 'success';
        } catch (e) {
          m.status = 'failure';
          m.message = (e as Error).message;
          throw e;
        }
        return { data: { migration_id: m.id } };
      },
    },
  }),
  route({
    path: 'remount/status/:migration_id',
    summary: 'Status of a mount move',
    fields: { migration_id: f.name('Migration id answered by sys/remount') },
    sudo: true,
    operations: {
      read: ({ engine, data }) => {
        const m = engine.migrations.get(data.migration_id);
        if (!m) return undefined;
        const info: Record<string, unknown> = { source_mount: m.source, target_mount: m.target, status: m.status };
        if (m.message) info.message = m.message;
        return { data: { migration_id: m.id, migration_info: info } };
      },
    },
  }),
];
