/**
 * Test support: the engine harness. A real Core and a real Router over in-memory storage, in the test's
 * own process: no build, no child process, no socket. Requests go straight into `Router.handle` as the
 * fast lane hands them over (a parsed request with its whole body) and the answer is collected from
 * the response the router writes, so a route test costs milliseconds instead of a daemon start.
 *
 * The API mimics test/support/daemon.ts: `d.req(method, path, body, opts)` answers the same `Answer`,
 * and `d.dir`, `d.token`, `d.output()`, `d.stop()` and `cleanup(d.dir)` are there too, so moving a
 * route test from the real daemon is a change of its setup lines. What the harness cannot show stays
 * on the daemon: the CLI, restarts, signals, listeners and socket-level HTTP, clusters, crashes.
 */
import { mkdtempSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/framework/logger.js';
import type { Logger } from '../../src/framework/context.js';
import { NoKeychain } from '../../src/seal/keychain.js';
import type { Backend } from '../../src/storage/backend.js';
import { InmemBackend } from '../../src/storage/inmem.js';
import { Core } from '../../src/server/core/core.js';
import { FastRequest } from '../../src/server/fast-http.js';
import type { ResponseSink } from '../../src/server/respond.js';
import { Router } from '../../src/server/router.js';
import { VERSION } from '../../src/version.js';
import { cleanup, type Answer } from './daemon.js';

export { cleanup, type Answer };

/** The daemon's default body limit (32 MiB, Vault's max_request_size). */
const MAX_REQUEST_SIZE = 32 * 1024 * 1024;

/** Options of a request, as `Daemon.req` takes them. */
export interface RequestOptions {
  /** Token for X-Vault-Token: the harness's root token unless given; null sends none. */
  token?: string | null;
  headers?: Record<string, string>;
  /** Body bytes sent as they are (no JSON encoding, no Content-Type added). */
  raw?: Buffer | string;
}

/** A Core and a Router in this process, driven like a daemon. */
export interface Harness {
  /** A fresh temporary directory (for audit files and the like); `cleanup(dir)` removes it. */
  dir: string;
  /** The root token. */
  token: string;
  core: Core;
  router: Router;
  /** Request to /v1/<path>; body objects are JSON-encoded. */
  req(method: string, path: string, body?: unknown, opts?: RequestOptions): Promise<Answer>;
  /** What the core logged (JSON lines), as `Daemon.output()` shows the daemon's stderr. */
  output(): string;
  /** Close the core (engines, background work, audit devices). */
  stop(): Promise<void>;
}

/** Options for startHarness. */
export interface HarnessOptions {
  /** Root token id; "root" as the daemon's tests use. */
  rootToken?: string;
  /** Initialise, unseal and mount transit/ and secret/ (kv v2) as `keyhold server --dev` does; default true. */
  dev?: boolean;
  /** Storage; a fresh in-memory one by default. */
  backend?: Backend;
  /** Log level of the captured output; default warn, as the daemon's tests run it. */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /**
   * Environment variables for the core (the daemon's `env`, e.g. KEYHOLD_SYNC_* tuning). They are set
   * in this process from the start until `stop()`, which restores the previous values: one harness
   * with an `env` at a time per test file.
   */
  env?: Record<string, string | undefined>;
}

/**
 * The one place the harness builds a Core. Core's constructor may change shape: this is the line to
 * change with it (everything else talks to the core through the router).
 */
export function buildCore(backend: Backend, logger: Logger): Core {
  return new Core({ backend, keychain: new NoKeychain(), logger, maxRequestSize: MAX_REQUEST_SIZE, version: VERSION });
}

/** Start a harness: in dev mode (the default) initialised, unsealed, transit/ and secret/ mounted. */
export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'keyhold-harness-'));
  const restoreEnv = applyEnv(opts.env ?? {});
  let out = '';
  const logger = createLogger(opts.logLevel ?? 'warn', (line) => void (out += line));
  const core = buildCore(opts.backend ?? new InmemBackend(), logger);
  let token = opts.rootToken ?? 'root';
  try {
    if (opts.dev ?? true) {
      // The daemon's --dev start (src/server/daemon.ts): init without a keychain, then two mounts.
      token = (await core.init({ useKeychain: false, rootTokenId: token })).rootToken;
      await core.mount('transit/', 'transit', { description: 'transit engine (dev)' });
      await core.mount('secret/', 'kv', { description: 'key/value secret storage', options: { version: '2' } });
    } else {
      await core.start();
    }
  } catch (e) {
    await core.close();
    restoreEnv();
    throw e;
  }
  const router = new Router(core);
  return {
    dir,
    token,
    core,
    router,
    req: (method, path, body, o = {}) =>
      send(router, method, path, body, { ...o, token: o.token === null ? undefined : (o.token ?? token) }),
    output: () => out,
    stop: () => core.close().finally(restoreEnv),
  };
}

/** Set `env` in process.env; the function returned puts the previous values back. */
function applyEnv(env: Record<string, string | undefined>): () => void {
  const before = Object.keys(env).map((k) => [k, process.env[k]] as const);
  const set = (k: string, v: string | undefined) => {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  };
  for (const [k, v] of Object.entries(env)) set(k, v);
  return () => {
    for (const [k, v] of before) set(k, v);
  };
}

/**
 * The peer a request came from, as the router reads it: no address, as on the daemon's Unix socket
 * (the router and the auth methods then see "unix").
 */
const LOCAL_PEER = {} as Socket;

/** One request through the router; resolves with the answer it wrote. */
function send(router: Router, method: string, path: string, body: unknown, opts: RequestOptions): Promise<Answer> {
  const headers: Record<string, string> = {};
  // node:http and the fast lane hand the router lower-case header names.
  for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = v;
  if (opts.token) headers['x-vault-token'] = opts.token;
  let payload = Buffer.alloc(0);
  if (opts.raw !== undefined) payload = Buffer.from(opts.raw);
  else if (body !== undefined) {
    payload = Buffer.from(JSON.stringify(body));
    headers['content-type'] ??= 'application/json';
  }
  if (payload.length) headers['content-length'] = String(payload.length);
  const url = '/v1/' + path.replace(/^\/+/, '');
  const sink = new CollectedResponse();
  return router.handle(new FastRequest(method, url, headers, LOCAL_PEER, payload), sink).then(() => sink.answer());
}

/** The router's side of a response, kept in memory. */
class CollectedResponse implements ResponseSink {
  headersSent = false;
  readonly takesParts = true;
  private status = 0;
  private headers: Record<string, string> = {};
  private chunks: Buffer[] = [];
  private destroyed = false;
  private finish!: () => void;
  /** Settles when the router has ended (or destroyed) the response. */
  private readonly done = new Promise<void>((r) => (this.finish = r));

  writeHead(status: number, headers?: Record<string, string | number>): this {
    this.status = status;
    for (const [k, v] of Object.entries(headers ?? {})) this.headers[k.toLowerCase()] = String(v);
    this.headersSent = true;
    return this;
  }

  end(body?: string | Buffer | readonly Buffer[]): this {
    if (typeof body === 'string') this.chunks.push(Buffer.from(body));
    else if (Buffer.isBuffer(body)) this.chunks.push(body);
    else if (body) this.chunks.push(...body);
    this.finish();
    return this;
  }

  destroy(): this {
    this.destroyed = true;
    this.finish();
    return this;
  }

  /** The answer as a client reads it; a destroyed response is a failed request, as on a socket. */
  async answer(): Promise<Answer> {
    await this.done;
    if (this.destroyed) throw new Error(`the router destroyed the response (status ${this.status || 'none'} written)`);
    const bytes = Buffer.concat(this.chunks);
    const text = bytes.toString('utf8');
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return {
      status: this.status,
      body: parsed,
      headers: { ...this.headers, 'content-length': String(bytes.length) },
      text,
    };
  }
}
