/**
 * The agent's cache (`cache { }`), in front of the API proxy:
 *
 * - What Vault Agent caches: responses it proxied that created a token (logins: an identical login
 *   through the agent gets the same token back while it is valid) or a lease (dynamic secrets, while
 *   the lease lasts). Revocations through the agent (`auth/token/revoke*`, `sys/leases/revoke*`)
 *   and `/agent/v1/cache-clear` evict them.
 * - Beyond Vault Community: KV version 2 reads (`data/`, `metadata/`, `subkeys/`) made with the
 *   agent's own token, kept until keyhold's KV change events (kv-events.ts) say the secret changed.
 *   A read is cached only while the mount's event feed is live, and not at all when a change arrived
 *   while it was in flight, so a changed secret is served stale no longer than its event takes.
 *
 * Entries are keyed by a hash of what makes a request distinct (token, method, path, query, body);
 * tokens are never kept in keys in the clear.
 */
import { createHash } from 'node:crypto';
import type { AgentLog } from '../log.js';
import type { RawAnswer, Upstream } from '../upstream.js';
import { KvEventFeed } from './kv-events.js';

interface Cached {
  answer: RawAnswer;
  /** The request's API path (`secret/data/app`), for cache-clear by request_path. */
  path: string;
  /** ms since epoch. */
  stored: number;
  expires: number;
  /** The hash of the token that made it (evicted when that token is revoked). */
  tokenHash: string;
  /** The token it created (a login), hashed. */
  createdToken?: string;
  leaseId?: string;
  /** KV: the mount and the secret's path inside it. */
  kv?: { mount: string; inner: string };
}

/** Entries kept at most; the oldest go first. */
const MAX_ENTRIES = 10_000;

const hash = (...parts: (string | Buffer)[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(typeof p === 'string' ? Buffer.from(p) : p).update('\0');
  return h.digest('hex');
};

/** KV v2 mounts and their paths, as looked up with sys/internal/ui/mounts. */
interface MountInfo {
  path: string;
  kv2: boolean;
}

export interface ProxiedRequest {
  method: string;
  /** `/v1/...` with its query. */
  url: string;
  token: string | undefined;
  body: Buffer;
}

export class AgentCache {
  private readonly entries = new Map<string, Cached>();
  private readonly feeds = new Map<string, KvEventFeed>();
  private readonly mounts = new Map<string, { info: MountInfo | null; at: number }>();

  constructor(
    private readonly up: Upstream,
    private readonly agentToken: () => string | undefined,
    private readonly log: AgentLog,
    private readonly kvEnabled: boolean,
  ) {}

  close(): void {
    for (const f of this.feeds.values()) f.stop();
  }

  private key(r: ProxiedRequest, forLogin: boolean): string {
    return forLogin ? hash('login', r.method, r.url, r.body) : hash(r.token ?? '', r.method, r.url, r.body);
  }

  /** A cached answer for this request, or undefined. */
  async lookup(r: ProxiedRequest): Promise<{ answer: RawAnswer; age: number } | undefined> {
    const path = apiPath(r.url);
    const login = isLogin(r.method, path);
    const e = this.entries.get(this.key(r, login));
    if (!e) return undefined;
    const now = Date.now();
    if (e.expires <= now || (e.kv && !this.feeds.get(e.kv.mount)?.live)) {
      this.entries.delete(this.key(r, login));
      return undefined;
    }
    return { answer: e.answer, age: Math.floor((now - e.stored) / 1000) };
  }

  /**
   * Before forwarding: what `store` needs to decide (the KV mount and its feed generation), and
   * evictions the request implies (revocations, writes).
   */
  async prepare(r: ProxiedRequest): Promise<{ kv?: { mount: string; inner: string; generation: number } }> {
    const path = apiPath(r.url);
    this.evictFor(r, path);
    if (!this.kvEnabled || r.method !== 'GET' || !r.token || r.token !== this.agentToken()) return {};
    const m = await this.mountOf(path, r.token);
    if (!m?.kv2) return {};
    const inner = kvInner(path.slice(m.path.length));
    if (inner === undefined) return {};
    const feed = this.feed(m.path);
    return feed.live ? { kv: { mount: m.path, inner, generation: feed.generation } } : {};
  }

  /** After forwarding: keep what may be kept. */
  store(r: ProxiedRequest, answer: RawAnswer, prep: Awaited<ReturnType<AgentCache['prepare']>>): void {
    if (answer.status !== 200) return;
    const path = apiPath(r.url);
    let body: {
      auth?: { client_token?: string; lease_duration?: number };
      lease_id?: string;
      lease_duration?: number;
    } | null = null;
    try {
      body = JSON.parse(answer.body.toString('utf8'));
    } catch {
      return;
    }
    const now = Date.now();
    const tokenHash = hash(r.token ?? '');
    if (body?.auth?.client_token && isLogin(r.method, path)) {
      const ttl = Number(body.auth.lease_duration ?? 0);
      const expires = ttl > 0 ? now + ttl * 1000 * 0.9 : now + 3600_000;
      this.put(this.key(r, true), {
        answer,
        path,
        stored: now,
        expires,
        tokenHash,
        createdToken: hash(body.auth.client_token),
      });
      this.log.debug('agent.cache', `cached the login at ${path}`);
      return;
    }
    if (body?.lease_id && Number(body.lease_duration ?? 0) > 0) {
      this.put(this.key(r, false), {
        answer,
        path,
        stored: now,
        expires: now + Number(body.lease_duration) * 1000 * 0.9,
        tokenHash,
        leaseId: body.lease_id,
      });
      this.log.debug('agent.cache', `cached the leased response of ${path}`);
      return;
    }
    if (prep.kv) {
      const feed = this.feeds.get(prep.kv.mount);
      // A change arrived while the read was in flight: the answer may be stale; do not keep it.
      if (!feed?.live || feed.generation !== prep.kv.generation) return;
      this.put(this.key(r, false), {
        answer,
        path,
        stored: now,
        expires: Infinity,
        tokenHash,
        kv: { mount: prep.kv.mount, inner: prep.kv.inner },
      });
    }
  }

  /** `/agent/v1/cache-clear`: type all | token | token_accessor (unsupported) | lease | request_path. */
  clear(type: string, value?: string): number {
    let n = 0;
    for (const [k, e] of this.entries) {
      const hit =
        type === 'all' ||
        (type === 'token' && value !== undefined && (e.tokenHash === hash(value) || e.createdToken === hash(value))) ||
        (type === 'lease' && value !== undefined && e.leaseId === value) ||
        (type === 'request_path' &&
          value !== undefined &&
          e.path.startsWith(value.replace(/^\/+/, '').replace(/^v1\//, '')));
      if (hit) {
        this.entries.delete(k);
        n++;
      }
    }
    return n;
  }

  private put(key: string, e: Cached): void {
    this.entries.delete(key);
    this.entries.set(key, e);
    // A Map iterates in insertion order: the first keys are the oldest.
    for (const k of this.entries.keys()) {
      if (this.entries.size <= MAX_ENTRIES) break;
      this.entries.delete(k);
    }
  }

  private evictFor(r: ProxiedRequest, path: string): void {
    if (r.method === 'GET' || r.method === 'HEAD') return;
    let body: Record<string, unknown> = {};
    try {
      body = r.body.length ? JSON.parse(r.body.toString('utf8')) : {};
    } catch {
      /* not JSON */
    }
    if (/^auth\/token\/revoke-self$/.test(path) && r.token) this.clear('token', r.token);
    else if (/^auth\/token\/revoke(-orphan)?$/.test(path) && typeof body.token === 'string')
      this.clear('token', body.token);
    else if (/^sys\/(leases\/)?revoke(\/|$)/.test(path)) {
      const id = typeof body.lease_id === 'string' ? body.lease_id : path.replace(/^sys\/(leases\/)?revoke\/?/, '');
      if (id) this.clear('lease', id);
    } else if (/^sys\/(leases\/)?revoke-prefix\//.test(path)) {
      const prefix = path.replace(/^sys\/(leases\/)?revoke-prefix\//, '');
      for (const [k, e] of this.entries) if (e.leaseId?.startsWith(prefix)) this.entries.delete(k);
    } else {
      // A write through the agent: drop what is cached for that KV path at once (its event follows).
      for (const [k, e] of this.entries)
        if (e.kv && path.startsWith(e.kv.mount) && kvInner(path.slice(e.kv.mount.length)) === e.kv.inner)
          this.entries.delete(k);
    }
  }

  private feed(mount: string): KvEventFeed {
    let f = this.feeds.get(mount);
    if (!f) {
      f = new KvEventFeed(mount, this.up, this.agentToken, (paths) => this.onChange(mount, paths), this.log);
      this.feeds.set(mount, f);
      f.start();
    }
    return f;
  }

  private onChange(mount: string, paths: string[] | 'all'): void {
    for (const [k, e] of this.entries) {
      if (e.kv?.mount !== mount) continue;
      if (paths === 'all' || paths.includes(e.kv.inner)) this.entries.delete(k);
    }
  }

  private async mountOf(path: string, token: string): Promise<MountInfo | null> {
    for (const [, m] of this.mounts) if (m.info && path.startsWith(m.info.path)) return m.info;
    const first = path.split('/')[0] ?? '';
    const known = this.mounts.get(first);
    if (known && Date.now() - known.at < 60_000) return known.info;
    let info: MountInfo | null = null;
    try {
      const r = await this.up.json('GET', `sys/internal/ui/mounts/${path}`, { token, allow: [400, 403, 404] });
      const d = r.body?.data;
      if (r.status === 200 && d?.path)
        info = { path: String(d.path), kv2: d.type === 'kv' && String(d.options?.version ?? '1') === '2' };
    } catch {
      info = null;
    }
    this.mounts.set(info?.path ?? first, { info, at: Date.now() });
    return info;
  }
}

/** `secret/data/app?version=1` from `/v1/secret/data/app?version=1` (query kept out). */
function apiPath(url: string): string {
  return url.replace(/^\/v1\//, '').replace(/\?.*$/, '');
}

function isLogin(method: string, path: string): boolean {
  return (method === 'POST' || method === 'PUT') && /^auth\/.+\/login(\/|$)/.test(path);
}

/** The secret's path inside a KV v2 mount for data/, metadata/ and subkeys/ reads; undefined otherwise. */
function kvInner(rest: string): string | undefined {
  const m = /^(data|metadata|subkeys)\/(.+)$/.exec(rest);
  return m ? m[2]!.replace(/\/+$/, '') : undefined;
}
