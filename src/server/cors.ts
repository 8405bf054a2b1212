/**
 * CORS for browsers (Vault's http/cors.go and sys/config/cors, behaviour only): off by default.
 * When enabled, a request carrying an Origin that is not listed is refused with 403 before anything
 * else runs (its token is never looked at, nothing is answered to that origin); a listed origin's
 * preflight (OPTIONS) is answered with the allowed methods and headers, and its other requests get
 * Access-Control-Allow-Origin naming that origin (never "*", and never Allow-Credentials: tokens
 * travel in headers, not cookies). Requests without an Origin are not browsers' and pass unchanged.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CorsConfig } from '../engines/sys/cors-routes.js';
import { invalid } from '../framework/errors.js';
import type { LifecycleEvents } from '../framework/events.js';
import { getJSON, putJSON, type Storage } from '../storage/backend.js';
import { withLateHeaders } from './forward.js';
import { sendError, type ResponseSink } from './respond.js';

/** Headers a browser may always send (Vault's StdAllowedHeaders, keyhold's spelling of the same list). */
export const STANDARD_CORS_HEADERS = [
  'Content-Type',
  'X-Requested-With',
  'X-Vault-AWS-IAM-Server-ID',
  'X-Vault-MFA',
  'X-Vault-No-Request-Forwarding',
  'X-Vault-Wrap-Format',
  'X-Vault-Wrap-TTL',
  'X-Vault-Policy-Override',
  'Authorization',
  'X-Vault-Token',
];

const METHODS = 'DELETE, GET, OPTIONS, POST, PUT, LIST';
/** Barrier key of the CORS config. */
export const CORS_KEY = 'sys/config/cors';

/** The live CORS policy of a node. */
export class CorsPolicy {
  /** False: the router's CORS step costs one property read. */
  enabled = false;
  private config: CorsConfig = { enabled: false, allowed_origins: [], allowed_headers: [...STANDARD_CORS_HEADERS] };
  private any = false;
  private origins = new Set<string>();
  private allowHeaders = STANDARD_CORS_HEADERS.join(', ');

  constructor(private readonly storage: Storage) {}

  /** The config as sys/config/cors reads it. */
  view(): CorsConfig {
    return {
      enabled: this.config.enabled,
      allowed_origins: [...this.config.allowed_origins],
      allowed_headers: [...this.config.allowed_headers],
    };
  }

  async reload(): Promise<void> {
    this.apply(
      (await getJSON<CorsConfig>(this.storage, CORS_KEY)) ?? {
        enabled: false,
        allowed_origins: [],
        allowed_headers: [],
      },
    );
  }

  clear(): void {
    this.apply({ enabled: false, allowed_origins: [], allowed_headers: [] });
  }

  /** Write a config (checked as Vault checks it; 400 naming the field). */
  async set(c: CorsConfig): Promise<void> {
    if (c.enabled && c.allowed_origins.length === 0)
      throw invalid('allowed_origins', 'at least one origin or the wildcard "*" must be given');
    if (c.allowed_origins.includes('*') && c.allowed_origins.length > 1)
      throw invalid('allowed_origins', 'to allow all origins "*" must be the only value');
    for (const o of c.allowed_origins)
      if (o !== '*' && !/^https?:\/\/[^\s/]+$/.test(o))
        throw invalid('allowed_origins', `"${o.slice(0, 100)}" is not an origin (scheme://host[:port])`);
    for (const h of c.allowed_headers)
      if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(h))
        throw invalid('allowed_headers', `"${h.slice(0, 64)}" is not a valid header name`);
    await putJSON(this.storage, CORS_KEY, c);
    this.apply(c);
  }

  private apply(c: CorsConfig): void {
    const headers = [...STANDARD_CORS_HEADERS];
    for (const h of c.allowed_headers) if (!headers.some((x) => x.toLowerCase() === h.toLowerCase())) headers.push(h);
    this.config = { enabled: c.enabled, allowed_origins: [...c.allowed_origins], allowed_headers: headers };
    this.any = c.allowed_origins.includes('*');
    this.origins = new Set(c.allowed_origins);
    this.allowHeaders = headers.join(', ');
    this.enabled = c.enabled;
  }

  /**
   * Apply CORS to a request: true when it has been answered (a refused origin, or a preflight);
   * otherwise the sink to answer through (the same one, or one adding the CORS headers).
   */
  handle(method: string | undefined, headers: IncomingHttpHeaders, res: ResponseSink): true | ResponseSink {
    const origin = headers.origin;
    if (typeof origin !== 'string' || origin === '') return res;
    if (!this.any && !this.origins.has(origin)) {
      sendError(res, 403, ['origin not allowed']);
      return true;
    }
    if (method === 'OPTIONS') {
      res.writeHead(204, {
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Methods': METHODS,
        'Access-Control-Allow-Headers': this.allowHeaders,
        'Access-Control-Max-Age': '300',
        Vary: 'Origin',
      });
      res.end();
      return true;
    }
    const extra = { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
    return withLateHeaders(res, () => extra);
  }
}

/** What `attachCors` needs from the core. */
export interface CorsHost {
  readonly barrier: Storage;
  /** Lifecycle events: loaded after unseal, forgotten before seal. */
  readonly events: Pick<LifecycleEvents, 'on'>;
}

/** Build the CORS policy of a core: loaded after unseal, forgotten before seal. */
export function attachCors(core: CorsHost): CorsPolicy {
  const cors = new CorsPolicy(core.barrier);
  core.events.on('after-unseal', () => cors.reload());
  core.events.on('before-seal', async () => cors.clear());
  return cors;
}

/** The router's CORS step: true when the request has been answered (refused origin, preflight). */
export function corsStep(
  cors: CorsPolicy | undefined,
  f: { req: { method?: string; headers: IncomingHttpHeaders }; res: ResponseSink },
): boolean {
  if (cors === undefined || !cors.enabled) return false;
  const sink = cors.handle(f.req.method, f.req.headers, f.res);
  if (sink === true) return true;
  f.res = sink;
  return false;
}
