/**
 * The agent's API proxy (`listener "unix" | "tcp"` with `api_proxy { use_auto_auth_token }`):
 * requests to `/v1/...` are passed to the server; a request without a token gets the agent's
 * auto-auth token (`use_auto_auth_token = true`), or every request does (`"force"`). With a
 * `cache { }` stanza, answers go through cache.ts. Agent endpoints: `/agent/v1/cache-clear`
 * (with a cache) and `/agent/v1/quit` (with `agent_api { enable_quit = true }`).
 * `require_request_header` refuses requests without `X-Vault-Request: true` (412).
 */
import { chmodSync, rmSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { TokenSource } from '../token-source.js';
import type { AgentConfig, ListenerConfig } from '../config.js';
import type { AgentLog } from '../log.js';
import { UnreachableError, type Upstream } from '../upstream.js';
import { AgentCache } from './cache.js';
import { sameToken } from '../same-token.js';

const WHO = 'agent.proxy';
/** Request headers not passed on (hop-by-hop, or recomputed). */
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'content-length',
]);
const MAX_BODY = 32 * 1024 * 1024;

/** One cache shared by every listener of an agent. */
const caches = new WeakMap<AgentConfig, AgentCache>();

export class ApiProxy {
  private server: Server | undefined;
  private readonly cache: AgentCache | undefined;

  constructor(
    private readonly l: ListenerConfig,
    private readonly cfg: AgentConfig,
    private readonly up: Upstream,
    private readonly tokens: TokenSource,
    private readonly log: AgentLog,
    private readonly onQuit: () => void,
  ) {
    if (cfg.cache) {
      let c = caches.get(cfg);
      if (!c) caches.set(cfg, (c = new AgentCache(up, () => tokens.current(), log, cfg.cache.cacheStaticSecrets)));
      this.cache = c;
    }
  }

  async listen(): Promise<void> {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((e) => {
        this.log.error(WHO, `${req.method} ${(req.url ?? '').replace(/\?.*$/, '')}: ${(e as Error).message}`);
        if (!res.headersSent)
          reply(res, 502, {
            errors: [e instanceof UnreachableError ? e.message : 'the agent could not complete the request'],
          });
        else res.destroy();
      });
    };
    const tls =
      this.l.tlsCertFile && this.l.tlsKeyFile
        ? { cert: readFileSync(this.l.tlsCertFile), key: readFileSync(this.l.tlsKeyFile) }
        : undefined;
    const server = tls ? createHttpsServer(tls, handler) : createHttpServer(handler);
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      if (this.l.type === 'unix') {
        rmSync(this.l.address, { force: true });
        server.listen(this.l.address, () => {
          chmodSync(this.l.address, this.l.socketMode ?? 0o600);
          resolve();
        });
      } else {
        const i = this.l.address.lastIndexOf(':');
        const host = this.l.address.slice(0, i).replace(/^\[|\]$/g, '') || '127.0.0.1';
        server.listen(Number(this.l.address.slice(i + 1)), host, () => resolve());
      }
    }).catch((e) => {
      throw new Error(
        `listener "${this.l.type}" ${this.l.address}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    });
    this.log.info(WHO, `listening on ${this.l.type} ${this.l.address}`);
  }

  close(): void {
    this.server?.close();
    this.server?.closeAllConnections?.();
    this.cache?.close();
    if (this.l.type === 'unix') rmSync(this.l.address, { force: true });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (body === null) return reply(res, 413, { errors: ['request body too large'] });
    const url = req.url ?? '/';
    if (this.l.requireRequestHeader && req.headers['x-vault-request'] !== 'true')
      return reply(res, 412, { errors: ['missing "X-Vault-Request: true" header'] });
    if (url.startsWith('/agent/v1/') || url.startsWith('/proxy/v1/'))
      return this.agentApi(
        req.method ?? 'GET',
        url.replace(/^\/(agent|proxy)\/v1\//, '').replace(/\?.*$/, ''),
        body,
        res,
      );
    if (!url.startsWith('/v1/')) return reply(res, 404, { errors: [] });

    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
    let token = headerToken(req);
    const use = this.cfg.apiProxy.useAutoAuthToken;
    if (use === 'force' || (use === true && !token)) {
      const agent = this.tokens.current();
      if (agent) {
        token = agent;
        delete headers.authorization;
        headers['x-vault-token'] = agent;
      }
    }
    const method = req.method ?? 'GET';
    const preq = { method, url, token, body };
    if (this.cache) {
      const hit = await this.cache.lookup(preq);
      if (hit) {
        res.writeHead(hit.answer.status, {
          ...passHeaders(hit.answer.headers),
          age: String(hit.age),
          'x-cache': 'HIT',
          'content-length': String(hit.answer.body.length),
        });
        res.end(hit.answer.body);
        return;
      }
    }
    const prep = this.cache ? await this.cache.prepare(preq) : {};
    const answer = await this.up.send(method, url, headers, body.length ? body : undefined);
    if (answer.status === 403 && sameToken(token, this.tokens.current())) this.tokens.suspect();
    this.cache?.store(preq, answer, prep);
    res.writeHead(answer.status, {
      ...passHeaders(answer.headers),
      ...(this.cache ? { 'x-cache': 'MISS' } : {}),
      'content-length': String(answer.body.length),
    });
    res.end(answer.body);
  }

  private agentApi(method: string, what: string, body: Buffer, res: ServerResponse): void {
    if (what === 'quit' && method === 'POST') {
      if (!this.l.enableQuit)
        return reply(res, 404, { errors: ['the quit endpoint is not enabled (agent_api { enable_quit = true })'] });
      reply(res, 200, null);
      setImmediate(this.onQuit);
      return;
    }
    if (what === 'cache-clear' && (method === 'POST' || method === 'PUT')) {
      if (!this.cache) return reply(res, 404, { errors: ['the cache is not enabled'] });
      let b: { type?: string; value?: string } = {};
      try {
        b = body.length ? JSON.parse(body.toString('utf8')) : {};
      } catch {
        return reply(res, 400, { errors: ['invalid JSON body'] });
      }
      if (!['all', 'token', 'lease', 'request_path', 'token_accessor'].includes(b.type ?? ''))
        return reply(res, 400, { errors: ['type: one of all, token, token_accessor, lease, request_path'] });
      if (b.type !== 'all' && !b.value) return reply(res, 400, { errors: [`value: required with type "${b.type}"`] });
      this.cache.clear(b.type!, b.value);
      return reply(res, 200, null);
    }
    reply(res, 404, { errors: [`unknown agent endpoint ${what}`] });
  }
}

function headerToken(req: IncomingMessage): string | undefined {
  const t = req.headers['x-vault-token'];
  if (typeof t === 'string' && t) return t;
  const a = req.headers.authorization;
  if (typeof a === 'string' && /^Bearer\s+/i.test(a)) return a.replace(/^Bearer\s+/i, '').trim() || undefined;
  return undefined;
}

function passHeaders(h: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP.has(k)) out[k] = v;
  return out;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = body === null ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n > MAX_BODY) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
