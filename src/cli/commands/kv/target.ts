/**
 * Where a kv command points: the mount is resolved from the path like `vault kv` does (`secret/foo` ->
 * mount `secret/`, secret `foo`; the longest KV mount from `sys/mounts`, else the first segment), or
 * given with `--mount`; KV version 1 mounts use plain paths.
 */
import type { ApiClient } from '../../command.js';
import { LocalError, ServerError } from '../../errors.js';

/** A resolved secret location. */
export interface Target {
  /** Mount path without slashes, e.g. "secret" or "team/kv". */
  mount: string;
  /** Secret path inside the mount, without leading/trailing slashes ("" for the mount root). */
  path: string;
  /** KV version 1 mount: plain paths, no data/ or metadata/ (as `vault kv` decides from options.version). */
  v1?: boolean;
}

/** Commands that exist only for KV version 2. */
export function needV2(t: Target, what: string): void {
  if (t.v1)
    throw new LocalError(
      `${what} needs KV version 2, and ${t.mount}/ is a KV version 1 mount (upgrade it with \`keyhold write sys/mounts/${t.mount}/tune options=version=2\`)`,
    );
}

function trimSlashes(s: string): string {
  return s.replace(/^\/+|\/+$/g, '');
}

function enc(p: string): string {
  return p === '' ? '' : p.split('/').map(encodeURIComponent).join('/');
}

/** API path `<mount>/<word>/<path>`, URL-encoded per segment. */
export function apiPath(t: Target, word: string): string {
  return [enc(t.mount), t.v1 ? '' : word, enc(t.path)].filter((s) => s !== '').join('/');
}

/** Human path `<mount>/<word>/<path>` for messages. */
export function shownPath(t: Target, word: string): string {
  return [t.mount, t.v1 ? '' : word, t.path].filter((s) => s !== '').join('/');
}

/** Resolve a path that must name a secret (not just a mount). */
export async function secretTarget(client: ApiClient, arg: string, mountFlag?: string): Promise<Target> {
  const t = await resolveTarget(client, arg, mountFlag);
  if (t.path === '')
    throw new LocalError(`"${arg}" names the mount ${t.mount}/, not a secret in it: give e.g. ${t.mount}/app/db`);
  return t;
}

/** Resolve mount and secret path from the argument (and `--mount`), asking the daemon for its mounts. */
export async function resolveTarget(client: ApiClient, arg: string, mountFlag?: string): Promise<Target> {
  if (mountFlag !== undefined && mountFlag !== '')
    return { mount: trimSlashes(mountFlag), path: trimSlashes(arg), v1: await isV1(client, trimSlashes(mountFlag)) };
  const clean = trimSlashes(arg);
  if (clean === '') throw new LocalError('give a path such as secret/foo (or --mount secret foo)');
  let mounts: Array<[string, boolean]> | null = null;
  try {
    const res = await client.read('sys/mounts');
    const table = ((res.body?.data ?? res.body ?? {}) as Record<string, unknown>) || {};
    mounts = Object.entries(table)
      .filter(
        ([, v]) => v && typeof v === 'object' && ['kv', 'generic'].includes(String((v as { type?: unknown }).type)),
      )
      .map(([k, v]) => [k, (v as { options?: { version?: string } | null }).options?.version !== '2']);
  } catch (e) {
    // A token without read on sys/mounts still works: fall back to the first path segment.
    if (!(e instanceof ServerError)) throw e;
  }
  if (mounts) {
    const best = mounts.filter(([m]) => (clean + '/').startsWith(m)).sort((a, b) => b[0].length - a[0].length)[0];
    if (!best)
      throw new LocalError(
        `no KV version 2 mount found for "${arg}" (nor a KV version 1 mount); mount one with \`keyhold secrets enable -path=NAME kv-v2\` or pass --mount`,
      );
    return { mount: trimSlashes(best[0]), path: trimSlashes(clean.slice(best[0].length)), v1: best[1] };
  }
  const i = clean.indexOf('/');
  const mount = i === -1 ? clean : clean.slice(0, i);
  return { mount, path: i === -1 ? '' : clean.slice(i + 1), v1: await isV1(client, mount) };
}

/** The KV version of a mount from `sys/internal/ui/mounts/<mount>` (the vault CLI's preflight); v2 when unknown. */
async function isV1(client: ApiClient, mount: string): Promise<boolean> {
  try {
    const res = await client.read(`sys/internal/ui/mounts/${enc(mount)}`);
    const v = ((res.body?.data as { options?: { version?: string } | null } | undefined)?.options ?? {})?.version;
    return v !== undefined && v !== '2';
  } catch {
    return false;
  }
}
