/**
 * The secrets templates read (`{{ secret "path" }}`, or write with `{{ secret "path" "k=v" }}`),
 * fetched with the agent's token and kept until they are due again: secrets without a lease (KV)
 * every `static_secret_render_interval`, leased ones (database credentials) at two thirds of their
 * lease, as consul-template renews them. Template execution is synchronous, so rendering runs in
 * passes (consul-template's way): a pass records what it needs and is missing, the source fetches
 * it, and the next pass renders with it (`renderWithSecrets`).
 */
import type { TokenSource } from './token-source.js';
import type { AgentLog } from './log.js';
import { GoStruct } from './template/values.js';
import type { GoTemplate, TemplateFunc } from './template/exec.js';
import { UpstreamError, type Upstream } from './upstream.js';

interface Entry {
  value: GoStruct | null;
  /** When it must be fetched again (ms since epoch). */
  due: number;
}

/** The secret as consul-template's `*dependency.Secret` shows it to templates. */
function secretStruct(body: Record<string, unknown> | null): GoStruct {
  const b = body ?? {};
  const warnings = Array.isArray(b.warnings) ? b.warnings : null;
  return new GoStruct('*dependency.Secret', {
    RequestID: String(b.request_id ?? ''),
    LeaseID: String(b.lease_id ?? ''),
    LeaseDuration: BigInt(Math.trunc(Number(b.lease_duration ?? 0))),
    Renewable: Boolean(b.renewable),
    Data: b.data ?? null,
    Warnings: warnings ?? [],
    Auth: b.auth ?? null,
    WrapInfo: b.wrap_info ?? null,
  });
}

export class SecretSource {
  private readonly cache = new Map<string, Entry>();

  constructor(
    private readonly up: Upstream,
    private readonly tokens: TokenSource,
    private readonly staticInterval: number,
    private readonly log: AgentLog,
  ) {}

  /** Forget everything (a new token: read again with it). */
  clear(): void {
    this.cache.clear();
  }

  /** The earliest time (ms) a cached secret is due again; Infinity when none is cached. */
  nextDue(keys: Iterable<string>): number {
    let due = Infinity;
    for (const k of keys) due = Math.min(due, this.cache.get(k)?.due ?? 0);
    return due;
  }

  /** Drop what is due, so the next render fetches it again. */
  expire(now = Date.now()): void {
    for (const [k, e] of this.cache) if (e.due <= now) this.cache.delete(k);
  }

  /** The `secret` function for one render pass: cached values, or null while `missing` collects the rest. */
  secretFunction(missing: Map<string, string[]>, used: Set<string>): TemplateFunc {
    return (...args: unknown[]) => {
      if (args.length === 0 || typeof args[0] !== 'string')
        throw new Error('secret: the first argument must be a path');
      const parts = args.map(String);
      const key = JSON.stringify(parts);
      used.add(key);
      const e = this.cache.get(key);
      if (e) return e.value;
      missing.set(key, parts);
      return null;
    };
  }

  /** Fetch one secret: a read, or with `k=v` arguments a write. */
  async fetch(key: string, parts: string[]): Promise<void> {
    const [path, ...kv] = parts as [string, ...string[]];
    const token = this.tokens.current();
    if (!token) throw new Error('no token yet');
    const body: Record<string, string> = {};
    for (const a of kv) {
      const i = a.indexOf('=');
      if (i < 1) throw new Error(`secret: argument "${a.replace(/=.*/, '=...')}" is not key=value`);
      body[a.slice(0, i)] = a.slice(i + 1);
    }
    let r;
    try {
      r = kv.length ? await this.up.json('PUT', path, { token, body }) : await this.up.json('GET', path, { token });
    } catch (e) {
      if (e instanceof UpstreamError && e.status === 403) this.tokens.suspect();
      if (e instanceof UpstreamError && e.status === 404) throw new Error(`no secret exists at ${path}`);
      throw e;
    }
    const value = r.body ? secretStruct(r.body) : null;
    const lease = Number(r.body?.lease_duration ?? 0);
    const seconds = lease > 0 ? Math.max(1, lease * (2 / 3)) : this.staticInterval;
    this.cache.set(key, { value, due: Date.now() + seconds * 1000 });
    this.log.debug('agent.template', `fetched ${path}${lease > 0 ? ` (lease ${lease}s)` : ''}`);
  }
}

/**
 * Render `t` with `data`-less execution (dot is nil, as consul-template), fetching what each pass
 * finds missing. Returns the text and the keys of the secrets it used.
 */
export async function renderWithSecrets(
  t: GoTemplate,
  source: SecretSource,
  bind: (secret: TemplateFunc) => void,
): Promise<{ text: string; used: Set<string> }> {
  for (let pass = 0; pass < 20; pass++) {
    const missing = new Map<string, string[]>();
    const used = new Set<string>();
    bind(source.secretFunction(missing, used));
    let text: string | undefined;
    let failure: unknown;
    try {
      text = t.execute(null);
    } catch (e) {
      failure = e;
    }
    if (missing.size === 0) {
      if (failure) throw failure;
      return { text: text!, used };
    }
    for (const [key, parts] of missing) await source.fetch(key, parts);
  }
  throw new Error(`${t.name}: secrets still missing after 20 render passes`);
}
