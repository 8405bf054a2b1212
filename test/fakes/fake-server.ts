/**
 * Base of the provider fakes: a loopback HTTP server with a request log and failure injection
 * (status codes, Retry-After, slowness), so tests can drive retries and sync statuses.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One injected failure. */
export interface FailureMode {
  /** Answer with this status instead of handling the request. */
  status?: number;
  /** Retry-After header (seconds) on the failure. */
  retryAfter?: number;
  /** Wait this long before answering (or before handling, when no status is set). */
  delayMs?: number;
  /** Only requests whose path matches. */
  path?: RegExp;
}

/** A parsed request handed to a fake's handler. */
export interface FakeRequest {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  body: Buffer;
  text: string;
}

/** A handler reply. */
export interface FakeReply {
  status: number;
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

/** Logged request (no bodies: they may hold secrets even in a test). */
export interface LoggedRequest {
  method: string;
  path: string;
  status: number;
  /** The `X-Amz-Target` header (AWS JSON protocol operation), when sent. */
  target?: string;
  /** With `target`: the secret the operation names (`SecretId` or `Name` of the JSON body). */
  secretId?: string;
}

/** Loopback HTTP server with failure injection. */
export class FakeServer {
  private server: Server | null = null;
  private readonly failures: Array<FailureMode & { remaining: number }> = [];
  private always: FailureMode | null = null;
  /** Last requests (bounded). */
  readonly log: LoggedRequest[] = [];
  port = 0;
  /** Requests received so far (counted on arrival, before any injected delay). */
  received = 0;

  constructor(private readonly handler: (r: FakeRequest) => FakeReply | Promise<FakeReply>) {}

  /** Base URL, e.g. http://127.0.0.1:12345. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listen on 127.0.0.1 on a free port. */
  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Stop listening and drop connections. */
  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }

  /** Fail the next `times` matching requests. */
  failNext(mode: FailureMode, times = 1): void {
    this.failures.push({ ...mode, remaining: times });
  }

  /** Fail every matching request until `heal()`. */
  failAlways(mode: FailureMode): void {
    this.always = mode;
  }

  /** Stop failing. */
  heal(): void {
    this.always = null;
    this.failures.length = 0;
  }

  /** Number of logged requests matching. */
  count(method: string, path: RegExp): number {
    return this.log.filter((l) => l.method === method && path.test(l.path)).length;
  }

  private pickFailure(path: string): FailureMode | null {
    if (this.always && (!this.always.path || this.always.path.test(path))) return this.always;
    const i = this.failures.findIndex((f) => !f.path || f.path.test(path));
    if (i === -1) return null;
    const f = this.failures[i]!;
    if (--f.remaining <= 0) this.failures.splice(i, 1);
    return f;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    this.received++;
    const url = new URL(req.url ?? '/', this.url);
    let reply: FakeReply;
    const failure = this.pickFailure(url.pathname);
    if (failure?.delayMs) await new Promise((r) => setTimeout(r, failure.delayMs));
    if (res.destroyed) return;
    if (failure?.status) {
      reply = {
        status: failure.status,
        json: { error: { code: 'Injected', message: 'injected failure' } },
        headers: failure.retryAfter !== undefined ? { 'Retry-After': String(failure.retryAfter) } : {},
      };
    } else {
      try {
        reply = await this.handler({
          method: req.method ?? 'GET',
          url,
          headers: req.headers,
          body,
          text: body.toString('utf8'),
        });
      } catch (e) {
        reply = { status: 500, json: { error: { message: `fake crashed: ${(e as Error).message}` } } };
      }
    }
    const target = req.headers['x-amz-target'];
    this.log.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      status: reply.status,
      ...(typeof target === 'string' ? { target, secretId: secretIdOf(body) } : {}),
    });
    if (this.log.length > 5000) this.log.splice(0, 1000);
    const payload = reply.json !== undefined ? JSON.stringify(reply.json) : (reply.text ?? '');
    const headers: Record<string, string> = {
      ...(reply.json !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...reply.headers,
    };
    if (reply.status === 204) {
      res.writeHead(204, headers);
      res.end();
      return;
    }
    res.writeHead(reply.status, { ...headers, 'Content-Length': String(Buffer.byteLength(payload)) });
    res.end(payload);
  }
}

/** `SecretId` or `Name` of an AWS JSON request body (never the value). */
function secretIdOf(body: Buffer): string | undefined {
  try {
    const b = JSON.parse(body.toString('utf8')) as { SecretId?: unknown; Name?: unknown };
    const id = b?.SecretId ?? b?.Name;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Bearer token of a request, or null. */
export function bearerOf(r: FakeRequest): string | null {
  const h = r.headers.authorization;
  return typeof h === 'string' && h.startsWith('Bearer ') ? h.slice(7) : null;
}

/** Parse a JSON body or null. */
export function jsonBody(r: FakeRequest): Record<string, unknown> | null {
  try {
    const v = JSON.parse(r.text);
    return v && typeof v === 'object' ? v : null;
  } catch {
    return null;
  }
}

/** Shared lifecycle of the provider fakes: one FakeServer routed to the subclass's request handler. */
export abstract class FakeProvider {
  readonly server: FakeServer = new FakeServer((r) => this.handle(r));
  /** Answer one request as the real service would (checking what it checks). */
  protected abstract handle(r: FakeRequest): FakeReply | Promise<FakeReply>;
  /** Listen on 127.0.0.1 (random port). */
  async start(): Promise<this> {
    await this.server.start();
    return this;
  }
  stop(): Promise<void> {
    return this.server.stop();
  }
  get url(): string {
    return this.server.url;
  }
}
