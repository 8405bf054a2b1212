/**
 * Listeners: one node:http server fed by a Unix-socket listener (mode 0600) and/or TCP listeners
 * (optionally TLS). node:http rather than express or fastify: we measured express 5 at ~0.2x and
 * fastify 5 at ~0.9x a bare node:http server, and our router is route-table driven anyway.
 */
import {
  createServer as createHttp,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { createServer as createNet, connect, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTls } from 'node:tls';
import { chmodSync, mkdirSync, readFileSync, unlinkSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { installListVerb } from './list-verb.js';
import { FastConnection, type FastHandler, type FastHooks } from './fast-http.js';

/** A listener from flags or the config file. */
export type ListenerSpec = (
  | {
      type: 'unix';
      path: string /** File mode of the socket (Vault's socket_mode); default 0600. */;
      socketMode?: number;
    }
  | ({ type: 'tcp'; address: string; tlsCert?: string; tlsKey?: string } & ClientCertSpec)
) & {
  /** Body limit for requests on this listener (Vault's per-listener max_request_size); else the daemon's. */
  maxRequestSize?: number;
};

/**
 * Client certificates on a TLS listener, as Vault's listener: asked for by default (the cert auth
 * method reads them; a client without one still connects), required and verified against
 * `tlsClientCaFile` with `tlsRequireClientCert`, not asked for with `tlsDisableClientCerts`.
 */
export interface ClientCertSpec {
  tlsRequireClientCert?: boolean;
  tlsClientCaFile?: string;
  tlsDisableClientCerts?: boolean;
}

/** node:tls server options for a listener's client certificate settings. */
function clientCertOptions(spec: ClientCertSpec): { requestCert: boolean; rejectUnauthorized: boolean; ca?: Buffer } {
  if (spec.tlsDisableClientCerts) return { requestCert: false, rejectUnauthorized: false };
  const ca = spec.tlsClientCaFile ? readFileSync(spec.tlsClientCaFile) : undefined;
  return { requestCert: true, rejectUnauthorized: spec.tlsRequireClientCert === true, ...(ca ? { ca } : {}) };
}

const socketLimits = new WeakMap<object, number>();

/** The body limit of the listener a request arrived on, or `fallback`. */
export function requestSizeLimit(socket: object | null | undefined, fallback: number): number {
  return (socket && socketLimits.get(socket)) ?? fallback;
}

/** Running listeners. */
export interface Listeners {
  addresses: string[];
  /** Stop accepting, let in-flight requests finish (up to `graceMs`), then close. */
  close(graceMs?: number): Promise<void>;
}

/** Limits against slow or greedy clients. */
export interface ListenerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  /** How often node:http sweeps connections for the two timeouts above (default 1000 ms). */
  checkIntervalMs?: number;
}

/** Timeouts and connection cap against slow or greedy clients (slowloris and friends). */
export const DEFAULT_LIMITS: ListenerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 4096,
};

async function socketInUse(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Start every listener; requests go to `handler` (node:http). With `fast`, connections start in the
 * fast lane (fast-http.ts), which answers plain requests itself and hands a connection to node:http
 * at the first request it does not take.
 */
export async function startListeners(
  specs: ListenerSpec[],
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  limits: ListenerLimits = DEFAULT_LIMITS,
  fast?: FastHandler,
): Promise<Listeners> {
  let inflight = 0;
  // Pipelined requests on one connection run one after another (RFC 9112 section 9.3.2: only safe
  // methods may be processed in parallel); node:http would otherwise start them all at once.
  const queue = new WeakMap<Socket, Promise<void>>();
  const counted = (req: IncomingMessage, res: ServerResponse) => {
    inflight++;
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    res.once('close', () => {
      inflight--;
      done();
    });
    res.once('finish', () => done());
    const sock = req.socket;
    const prev = queue.get(sock);
    queue.set(sock, finished);
    if (prev) void prev.then(() => handler(req, res));
    else handler(req, res);
  };
  const http: HttpServer = createHttp(
    {
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs ?? 1000,
    },
    counted,
  );
  // node:http only tracks connections (and so enforces headersTimeout/requestTimeout) once the server
  // emits 'listening'; this server is fed sockets by the net listeners below and never listens itself.
  http.emit('listening');
  http.maxHeadersCount = 200;
  // Answer clients that half-close after their request (Go's server, and so Vault, does): node:http
  // otherwise aborts the request on the client's FIN. Needs allowHalfOpen on the listening sockets.
  (http as HttpServer & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  const sockets = new Set<Socket>();
  const feedFor = (spec: ListenerSpec) => (sock: Socket) => {
    if (spec.maxRequestSize !== undefined) socketLimits.set(sock, spec.maxRequestSize);
    feed(sock);
  };
  const toNode = (sock: Socket) => {
    installListVerb(sock);
    http.emit('connection', sock);
  };
  const fastConns = new Set<FastConnection>();
  const hooks: FastHooks | null = fast
    ? {
        handler: fast,
        fallback(sock, rest, ended) {
          const before = new Set(sock.listeners('end'));
          toNode(sock);
          // Replay what the fast lane read but did not answer, then the peer's FIN if it came.
          if (rest) sock.emit('data', rest);
          if (ended) for (const l of sock.listeners('end')) if (!before.has(l)) (l as () => void).call(sock);
          if (sock.isPaused()) sock.resume();
        },
        started: () => void inflight++,
        finished: () => void inflight--,
        gone: (c) => void fastConns.delete(c),
      }
    : null;
  const sweep = hooks
    ? setInterval(() => {
        const now = Date.now();
        for (const c of fastConns) c.sweep(now, limits);
      }, limits.checkIntervalMs ?? 1000).unref()
    : null;
  const feed = (sock: Socket) => {
    sockets.add(sock);
    sock.once('close', () => sockets.delete(sock));
    if (hooks) fastConns.add(new FastConnection(sock, hooks, limits.keepAliveTimeoutMs));
    else toNode(sock);
  };
  const servers: NetServer[] = [];
  const addresses: string[] = [];
  const unixPaths: string[] = [];
  try {
    for (const spec of specs) {
      if (spec.type === 'unix') {
        servers.push(await listenUnix(spec, feedFor(spec), limits));
        unixPaths.push(spec.path);
        addresses.push(`unix://${spec.path}`);
      } else {
        const { server, address } = await listenTcp(spec, feedFor(spec), limits);
        servers.push(server);
        addresses.push(address);
      }
    }
  } catch (e) {
    for (const s of servers) s.close();
    throw e;
  }
  return {
    addresses,
    async close(graceMs = 10_000) {
      // Stop accepting first; net.Server's close callback only fires once every connection has
      // ended, so it is awaited after the connections are closed below, not before.
      const stopped = servers.map((s) => new Promise<void>((r) => s.close(() => r())));
      if (sweep) clearInterval(sweep);
      for (const c of [...fastConns]) c.close();
      http.closeIdleConnections();
      const deadline = Date.now() + graceMs;
      while (inflight > 0 && Date.now() < deadline) {
        http.closeIdleConnections();
        await new Promise((r) => setTimeout(r, 20));
      }
      http.closeAllConnections();
      for (const sock of sockets) sock.destroy();
      await Promise.race([Promise.all(stopped), new Promise((r) => setTimeout(r, 2000).unref())]);
      for (const p of unixPaths) {
        try {
          unlinkSync(p);
        } catch {
          /* already removed */
        }
      }
    },
  };
}

/** Listen on a Unix socket (mode 0600 unless configured), refusing a path another daemon still answers on. */
async function listenUnix(
  spec: Extract<ListenerSpec, { type: 'unix' }>,
  onConnection: (sock: Socket) => void,
  limits: ListenerLimits,
): Promise<NetServer> {
  mkdirSync(dirname(spec.path), { recursive: true, mode: 0o700 });
  if (existsSync(spec.path)) {
    if (await socketInUse(spec.path)) throw new Error(`another daemon is already listening on ${spec.path}`);
    unlinkSync(spec.path);
  }
  // allowHalfOpen as node:http's own server has it: a client that half-closes after its request
  // (sends FIN) still gets the answer; http ends the socket once the response is written.
  const srv = createNet({ pauseOnConnect: false, allowHalfOpen: true }, onConnection);
  srv.maxConnections = limits.maxConnections;
  const old = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(spec.path, () => resolve());
    });
  } finally {
    process.umask(old);
  }
  chmodSync(spec.path, spec.socketMode ?? 0o600);
  return srv;
}

/** Listen on `host:port` (TLS when the spec has a certificate); the address as clients reach it. */
async function listenTcp(
  spec: Exclude<ListenerSpec, { type: 'unix' }>,
  onConnection: (sock: Socket) => void,
  limits: ListenerLimits,
): Promise<{ server: NetServer; address: string }> {
  const m = /^(.*):(\d+)$/.exec(spec.address);
  if (!m) throw new Error(`listen address must be host:port, got "${spec.address}"`);
  const host = m[1]!.replace(/^\[|\]$/g, '');
  const port = Number(m[2]);
  const tls = spec.tlsCert && spec.tlsKey;
  const srv: NetServer = tls
    ? createTls(
        {
          cert: readFileSync(spec.tlsCert!),
          key: readFileSync(spec.tlsKey!),
          allowHalfOpen: true,
          noDelay: true,
          ...clientCertOptions(spec),
        },
        (s) => onConnection(s as unknown as Socket),
      )
    : // noDelay as node:http sets it: an answer is one write and must not wait for an ACK (Nagle).
      createNet({ allowHalfOpen: true, noDelay: true }, onConnection);
  srv.maxConnections = limits.maxConnections;
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, () => resolve());
  });
  const a = srv.address();
  const actualPort = typeof a === 'object' && a ? a.port : port;
  return {
    server: srv,
    address: `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${actualPort}`,
  };
}
