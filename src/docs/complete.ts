/**
 * Dynamic completion candidates from the daemon (the hidden `keyhold __complete`): key names, KV
 * paths, mounts, destination names and policies, each by one LIST or GET. Callers give up quietly
 * after a short timeout so a missing daemon never slows the shell down.
 */
import type { Client } from '../cli/client.js';
import { SYNC_TYPES, type Source } from './dynamic.js';

/** Options the shell passed along (`--mount`, `--address`, `--token`) and the word being completed. */
export interface WordsInfo {
  options: Record<string, string>;
  /** Positional words (not options, not option values), in order, the current word excluded. */
  positionals: string[];
  current: string;
}

const VALUE_OPTIONS = new Set(['--mount', '--address', '--token', '--format', '--field', '--type']);

/** Split the command-line words (after `keyhold`, current word last) into options and positionals. */
export function parseWords(words: string[]): WordsInfo {
  const options: Record<string, string> = {};
  const positionals: string[] = [];
  const current = words.length ? words[words.length - 1]! : '';
  const done = words.slice(0, -1);
  for (let i = 0; i < done.length; i++) {
    const w = done[i]!;
    const eq = w.indexOf('=');
    if (w.startsWith('--') && eq > 2) options[w.slice(0, eq)] = w.slice(eq + 1);
    else if (w.startsWith('-')) {
      if (VALUE_OPTIONS.has(w) && i + 1 < done.length) options[w] = done[++i]!;
    } else positionals.push(w);
  }
  return { options, positionals, current };
}

function strip(s: string): string {
  return s.replace(/^\/+|\/+$/g, '');
}

async function listKeys(client: Client, path: string): Promise<string[]> {
  const res = await client.request('LIST', path, undefined, { allowStatus: [404] });
  const keys = (res.body?.data as { keys?: unknown } | undefined)?.keys;
  return Array.isArray(keys) ? keys.map(String) : [];
}

async function mountsOf(client: Client, type?: string): Promise<string[]> {
  const res = await client.request('GET', 'sys/mounts');
  const data = (res.body?.data ?? {}) as Record<string, { type?: string }>;
  return Object.entries(data)
    .filter(([p, m]) => p !== 'sys/' && (!type || m.type === type || (type === 'kv' && m.type === 'kv-v2')))
    .map(([p]) => p)
    .sort();
}

/** KV paths under the mount: `secret/app/` lists secret/metadata/app/; without --mount the first segment is the mount. */
async function kvPaths(client: Client, info: WordsInfo): Promise<string[]> {
  const cur = info.current;
  const mountOpt = info.options['--mount'];
  let mount: string;
  let rel: string;
  let prefix: string;
  if (mountOpt) {
    mount = strip(mountOpt);
    rel = cur;
    prefix = '';
  } else {
    const slash = cur.indexOf('/');
    if (slash < 0) return mountsOf(client, 'kv');
    mount = cur.slice(0, slash);
    rel = cur.slice(slash + 1);
    prefix = mount + '/';
  }
  const dir = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/') + 1) : '';
  const children = await listKeys(client, `${mount}/metadata/${dir}`);
  return children.map((c) => `${prefix}${dir}${c}`);
}

async function destinations(client: Client, info: WordsInfo): Promise<string[]> {
  const res = await client.request('LIST', 'sys/sync/destinations', undefined, { allowStatus: [404] });
  const data = (res.body?.data ?? {}) as { key_info?: Record<string, unknown>; keys?: unknown };
  const type = info.positionals.find((p) => SYNC_TYPES.includes(p));
  if (data.key_info && typeof data.key_info === 'object') {
    const names = new Set<string>();
    for (const [t, v] of Object.entries(data.key_info)) {
      if (type && strip(t) !== type) continue;
      if (Array.isArray(v)) for (const n of v) names.add(String(n));
    }
    return [...names].sort();
  }
  return Array.isArray(data.keys) ? data.keys.map(String) : [];
}

/** Candidates for `source`, asked of the daemon; throws on any failure (the caller stays quiet). */
export async function candidates(source: Source, words: string[], client: Client): Promise<string[]> {
  const info = parseWords(words);
  switch (source) {
    case 'transit-keys':
      return listKeys(client, `${strip(info.options['--mount'] ?? 'transit')}/keys`);
    case 'kv-paths':
      return kvPaths(client, info);
    case 'mounts':
      return mountsOf(client);
    case 'transit-mounts':
      return (await mountsOf(client, 'transit')).map(strip);
    case 'kv-mounts':
      return (await mountsOf(client, 'kv')).map(strip);
    case 'sync-destinations':
      return destinations(client, info);
    case 'sync-types':
      return [...SYNC_TYPES];
    case 'policies':
      return listKeys(client, 'sys/policies/acl');
    case 'audit-devices': {
      const res = await client.request('GET', 'sys/audit');
      return Object.keys((res.body?.data ?? {}) as object).map(strip);
    }
    default:
      return [];
  }
}

/** Run `work`, or give up with no candidates after `ms`. */
export async function withTimeout<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work.catch(() => fallback), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
