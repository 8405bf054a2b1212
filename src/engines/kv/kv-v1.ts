/**
 * KV version 1 (hashicorp/vault-plugin-secrets-kv passthrough.go; identity-wire.md section 8): one
 * unversioned JSON object per path, replaced whole on write; a `ttl` (or legacy `lease`) key is
 * reported as the read's lease_duration (advisory, no lease is registered). Path names are encrypted
 * in storage with the same cipher and name key as KV v2, so an upgrade to v2 reads them in place.
 */
import type { EngineEnv } from '../../framework/context.js';
import type { EngineModule } from '../../framework/engine.js';
import { invalid } from '../../framework/errors.js';
import { f, parseDuration } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import { getJSON, putJSON } from '../../storage/backend.js';
import { MAX_SEGMENT_BYTES, type PathCipher, loadPathCipher } from './path-cipher.js';

/** Storage key of the mount's name key (shared with KV v2). */
/** Vault's system default lease TTL (768h). */
const SYSTEM_TTL = 768 * 3600;

function checkPath(path: string): void {
  if (
    path === '' ||
    path.startsWith('/') ||
    path.includes('//') ||
    path.split('/').some((s) => s === '.' || s === '..')
  )
    throw invalid('path', 'invalid secret path');
  if (path.split('/').some((s) => Buffer.byteLength(s) > MAX_SEGMENT_BYTES))
    throw invalid('path', `each path segment must be at most ${MAX_SEGMENT_BYTES} bytes`);
}

/** One KV v1 mount. */
export class KvV1Engine {
  private cipherP: Promise<PathCipher> | null = null;

  constructor(readonly env: EngineEnv) {}

  /** Nothing to stop. */
  async close(): Promise<void> {}

  private cipher(): Promise<PathCipher> {
    this.cipherP ??= loadPathCipher(this.env.storage).catch((e) => {
      this.cipherP = null;
      throw e;
    });
    return this.cipherP;
  }

  /** The object at `path`, or null. */
  async read(path: string): Promise<Record<string, unknown> | null> {
    checkPath(path);
    return getJSON<Record<string, unknown>>(this.env.storage, `v1/${(await this.cipher()).encryptPath(path)}`);
  }

  /** Replace the object at `path`. */
  async write(path: string, data: Record<string, unknown>): Promise<void> {
    checkPath(path);
    await putJSON(this.env.storage, `v1/${(await this.cipher()).encryptPath(path)}`, data);
  }

  /** Delete `path` (absent: nothing). */
  async delete(path: string): Promise<void> {
    checkPath(path);
    await this.env.storage.delete(`v1/${(await this.cipher()).encryptPath(path)}`);
  }

  /** Keys under a folder ("" = root); sub-folders end with "/". */
  async list(path: string): Promise<string[]> {
    if (path !== '') checkPath(path);
    const cipher = await this.cipher();
    const prefix = path === '' ? 'v1/' : `v1/${cipher.encryptPath(path)}/`;
    const out = new Set<string>();
    for (const name of await this.env.storage.list(prefix)) {
      const folder = name.endsWith('/');
      const plain = cipher.decryptSegment(path, folder ? name.slice(0, -1) : name);
      if (plain !== null) out.add(folder ? plain + '/' : plain);
    }
    return [...out].sort();
  }

  /** Every path with its object (the upgrade to v2 walks them). */
  async *entries(folder = ''): AsyncGenerator<[string, Record<string, unknown>]> {
    for (const k of await this.list(folder)) {
      const full = folder ? `${folder}/${k}` : k;
      if (k.endsWith('/')) yield* this.entries(full.slice(0, -1));
      else {
        const v = await this.read(full);
        if (v) yield [full, v];
      }
    }
  }

  /** Remove the v1 records and folders after an upgrade. */
  async clear(): Promise<void> {
    const walk = async (prefix: string): Promise<void> => {
      for (const n of await this.env.storage.list(prefix)) {
        if (n.endsWith('/')) await walk(prefix + n);
        else await this.env.storage.delete(prefix + n);
      }
    };
    await walk('v1/');
  }

  /**
   * lease_duration of a read: the `ttl` (or `lease`) key as a duration, else the mount's tuned
   * default lease TTL; never above the mount's tuned max (the system's 768h where a mount sets
   * neither), as Vault caps a response's TTL at the mount's max.
   */
  leaseOf(data: Record<string, unknown>): number {
    const { defaultTtl, maxTtl } = this.mountTtls();
    for (const k of ['ttl', 'lease']) {
      const v = data[k];
      if (v === undefined) continue;
      let ttl: number;
      try {
        ttl = parseDuration(k, v);
      } catch {
        throw invalid(`failed to parse ${k}: ${JSON.stringify(v).slice(0, 64)}`);
      }
      return Math.min(ttl, maxTtl);
    }
    return defaultTtl;
  }

  /** The mount's tuned default and max lease TTL in seconds (read live: a tune takes effect on the next read). */
  private mountTtls(): { defaultTtl: number; maxTtl: number } {
    const c = this.env.mount.config;
    const max = ttlSetting(c.max_lease_ttl) || SYSTEM_TTL;
    const def = ttlSetting(c.default_lease_ttl) || SYSTEM_TTL;
    return { defaultTtl: Math.min(def, max), maxTtl: max };
  }
}

/** Seconds of a stored mount TTL setting (0 = unset). */
function ttlSetting(v: unknown): number {
  if (typeof v === 'number') return v > 0 ? v : 0;
  if (typeof v !== 'string' || v === '' || v === 'system') return 0;
  try {
    return parseDuration('ttl', v);
  } catch {
    return 0;
  }
}

const route = routesFor<KvV1Engine>();

/** KV v1 routes: one path template for read, write, list and delete. */
export const kvV1Routes: AnyRoute[] = [
  route({
    path: '(*path)',
    summary: 'Read, write, list or delete an unversioned secret (KV version 1)',
    fields: { path: f.string('Secret path (may contain slashes)') },
    exists: async ({ engine, data }) => (data.path ? (await engine.read(data.path)) !== null : false),
    operations: {
      read: async ({ engine, data }) => {
        if (!data.path) return undefined;
        const v = await engine.read(data.path);
        return v ? { data: v, leaseDuration: engine.leaseOf(v) } : undefined;
      },
      update: async ({ engine, data, raw }) => {
        if (!data.path) throw invalid('path', 'missing secret path');
        const body: Record<string, unknown> = {};
        for (const k of Object.keys(raw)) if (k !== 'path') body[k] = raw[k];
        if (Object.keys(body).length === 0) throw invalid('missing data fields');
        if (body.ttl !== undefined) engine.leaseOf(body);
        await engine.write(data.path, body);
      },
      delete: async ({ engine, data }) => {
        if (data.path) await engine.delete(data.path);
      },
      list: async ({ engine, data }) => ({ data: { keys: await engine.list((data.path ?? '').replace(/\/+$/, '')) } }),
    },
  }),
];

/** The KV v1 module (type "kv" with options.version=1, and "generic"). */
export const kvV1Engine: EngineModule<KvV1Engine> = {
  type: 'kv',
  accessorPrefix: 'kv',
  description: 'Unversioned key/value secrets (KV version 1)',
  routes: kvV1Routes,
  async create(env) {
    return new KvV1Engine(env);
  },
};
