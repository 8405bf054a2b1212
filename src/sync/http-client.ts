/** A small HTTP client for connectors: guarded agents, timeouts, abort, bounded reply size. */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { NetworkGuard } from './network-guard.js';
import { SyncFailure, failureFromError, failureFromStatus, parseRetryAfter, rateLimitOf } from './failure.js';

/** A provider reply. */
export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request. */
export interface HttpCall {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Label used in failure messages ("PUT secret"). */
  what: string;
}

/** Largest reply body kept (providers answer small JSON documents). */
const MAX_REPLY = 4 * 1024 * 1024;

/** HTTP client bound to one destination's network guard. */
export class HttpClient {
  private readonly agents: { http: HttpAgent; https: HttpsAgent };
  constructor(
    readonly guard: NetworkGuard,
    private readonly timeoutMs: number,
  ) {
    this.agents = guard.agents();
  }

  /** Send a request; resolves with any HTTP status, throws SyncFailure on network errors and timeouts. */
  async send(call: HttpCall, signal?: AbortSignal): Promise<HttpReply> {
    let url: URL;
    try {
      url = new URL(call.url);
    } catch {
      throw new SyncFailure('CLIENT_SIDE_ERROR', `${call.what}: invalid URL`);
    }
    try {
      this.guard.checkUrl(url);
    } catch (e) {
      throw failureFromError(e, call.what);
    }
    const body =
      call.body === undefined ? undefined : Buffer.isBuffer(call.body) ? call.body : Buffer.from(call.body, 'utf8');
    const headers: Record<string, string> = { 'User-Agent': 'keyhold-sync', ...call.headers };
    if (body) headers['Content-Length'] = String(body.length);
    return new Promise<HttpReply>((resolve, reject) => {
      const fn = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = fn(
        url,
        {
          method: call.method,
          headers,
          agent: url.protocol === 'https:' ? this.agents.https : this.agents.http,
          signal,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size <= MAX_REPLY) chunks.push(c);
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', (e) => reject(failureFromError(e, call.what)));
        },
      );
      req.setTimeout(this.timeoutMs, () => {
        const e = Object.assign(new Error('timeout'), { code: 'EKEYHOLD_TIMEOUT' });
        req.destroy(e);
      });
      req.on('error', (e) => reject(failureFromError(e, call.what)));
      req.end(body);
    });
  }

  /** Close idle keep-alive sockets. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

/** Parse a JSON reply body, or null. */
export function jsonOf(reply: HttpReply): Record<string, unknown> | null {
  try {
    const v = JSON.parse(reply.text);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Turn a non-2xx reply into a SyncFailure; `detail` extracts the provider's error code/message. */
export function failureOf(
  reply: HttpReply,
  what: string,
  detail: (body: Record<string, unknown> | null) => string,
  now: number,
): SyncFailure {
  const d = detail(jsonOf(reply)).replace(/\s+/g, ' ').slice(0, 300);
  const limit = rateLimitOf(reply.status, reply.headers, reply.text, now);
  if (limit.limited) return failureFromStatus(reply.status, what, d, limit.retryAfterMs, true);
  return failureFromStatus(
    reply.status,
    what,
    d,
    reply.status === 503 ? parseRetryAfter(reply.headers['retry-after'], now) : undefined,
  );
}

/** True for 2xx. */
export function ok(reply: HttpReply): boolean {
  return reply.status >= 200 && reply.status < 300;
}
