/**
 * The fast lane: a strict-subset HTTP/1.1 reader for the requests Vault clients send all day
 * (GET/POST/PUT/DELETE/LIST with a Content-Length body or none), writing each answer in one socket
 * write. Anything else (chunked bodies, Expect, Upgrade, HTTP/1.0, HEAD, PATCH, folded or duplicate
 * headers, bare LF, oversized heads or bodies) is not guessed at: at that request's boundary the
 * connection is handed, with the bytes it has not yet answered, to node:http (and its LIST rewriter)
 * for the rest of its life. So the well-tested parser sees every unusual request, and the common
 * one skips IncomingMessage/ServerResponse and their streams (about 2x fewer CPU cycles per request).
 *
 * Requests on one connection run one after another (pipelined ones wait), like the node:http path.
 * Timeouts follow node:http's: headers (from the first byte, or the connection's start), the whole
 * request (headers and body), keep-alive idle; a periodic sweep enforces them.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

/** Methods the fast lane parses; others go to node:http. */
const FAST_METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'LIST']);
/** Largest head (request line and headers) the fast lane reads; node:http answers bigger ones (431). */
const MAX_HEAD = 16 * 1024;
/** Largest body the fast lane buffers; bigger ones stream through node:http (and get its 413 handling). */
export const FAST_MAX_BODY = 1024 * 1024;
const MAX_HEADERS = 100;
const TARGET = /^\/[\x21-\x7e]*$/;
const LENGTH = /^\d{1,16}$/;

/** A request head the fast lane takes: headers lower-cased, `length` of the body. */
export interface RequestHead {
  method: string;
  url: string;
  headers: Record<string, string>;
  length: number;
}

/** A parsed request of the fast lane: what the router reads from a request. */
export class FastRequest {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: Record<string, string>,
    readonly socket: Socket,
    /** The whole body (the fast lane reads it before dispatch). */
    readonly body: Buffer,
  ) {}
}

function lengthOf(parts: readonly Buffer[]): number {
  let n = 0;
  for (const p of parts) n += p.length;
  return n;
}

let dateCache = '';
let dateSecond = 0;
function httpDate(): string {
  const now = Date.now();
  const s = Math.floor(now / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateCache = new Date(now).toUTCString();
  }
  return dateCache;
}

/** The answer side: the subset of ServerResponse the router uses, written in one socket write. */
export class FastResponse {
  headersSent = false;
  /** `end` takes a body as pieces (see ResponseSink.takesParts). */
  readonly takesParts = true;
  private status = 200;
  private headers: Record<string, string | number> | null = null;
  constructor(private readonly conn: FastConnection) {}

  writeHead(status: number, headers?: Record<string, string | number>): this {
    this.status = status;
    this.headers = headers ?? null;
    return this;
  }

  end(body?: string | Buffer | readonly Buffer[]): this {
    if (this.headersSent) return this;
    this.headersSent = true;
    const status = this.status;
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`;
    let haveLength = false;
    if (this.headers) {
      for (const name in this.headers) {
        if (name.length === 14 && name.toLowerCase() === 'content-length') haveLength = true;
        head += `${name}: ${this.headers[name]}\r\n`;
      }
    }
    const noBody = status === 204 || status === 304 || (status >= 100 && status < 200);
    if (!haveLength && !noBody)
      head += `Content-Length: ${body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : Array.isArray(body) ? lengthOf(body) : (body as Buffer).length}\r\n`;
    const close = this.conn.closeAfterResponse();
    head += `Date: ${httpDate()}\r\n`;
    head += close ? 'Connection: close\r\n\r\n' : this.conn.keepAliveHeader;
    this.conn.write(head, noBody ? undefined : body);
    this.conn.responded(close);
    return this;
  }

  /** Abort the connection (after a failure once headers were sent). */
  destroy(): void {
    this.conn.socket.destroy();
  }
}

/** Called with each fast request; must answer through `res` exactly once. */
export type FastHandler = (req: FastRequest, res: FastResponse) => void;

/** What a fast connection calls back into its listener set. */
export interface FastHooks {
  handler: FastHandler;
  /** Take the socket over (node:http): `rest` are bytes not yet answered, `ended` if the peer sent FIN. */
  fallback(socket: Socket, rest: Buffer | null, ended: boolean): void;
  /** A request was dispatched / answered (for graceful shutdown). */
  started(): void;
  finished(): void;
  /** The connection left the fast lane (closed or handed over). */
  gone(conn: FastConnection): void;
}

/** Timeouts the sweep enforces, in ms. */
export interface FastTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

const enum Phase {
  /** Waiting for (the rest of) a request head. */
  Head,
  /** Head read, waiting for the rest of the body. */
  Body,
  /** A request is being answered. */
  Busy,
  /** Between requests on a keep-alive connection. */
  Idle,
}

/** One connection in the fast lane. */
export class FastConnection {
  phase = Phase.Head;
  /** When the current phase's clock started (ms). */
  since = Date.now();
  private buf: Buffer | null = null;
  /** Where to resume looking for the end of the head. */
  private scanFrom = 0;
  private peerEnded = false;
  private closeRequested = false;
  private shuttingDown = false;
  private pendingFallback = false;
  /** The current request is counted as in flight (from its head until answered or dropped). */
  private counted = false;
  /** Left the fast lane: closed or handed to node:http. */
  private gone = false;
  private current: RequestHead | null = null;
  private headEnd = 0;
  readonly keepAliveHeader: string;
  private readonly onData = (chunk: Buffer) => this.data(chunk);
  private readonly onEnd = () => this.ended();
  private readonly onError = () => this.socket.destroy();
  private readonly onClose = () => this.detach();

  constructor(
    readonly socket: Socket,
    private readonly hooks: FastHooks,
    keepAliveTimeoutMs: number,
  ) {
    this.keepAliveHeader = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveTimeoutMs / 1000)}\r\n\r\n`;
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
  }

  private data(chunk: Buffer): void {
    if (this.phase === Phase.Idle) {
      this.phase = Phase.Head;
      this.since = Date.now();
    }
    this.buf = this.buf ? Buffer.concat([this.buf, chunk]) : chunk;
    if (this.phase === Phase.Busy) {
      // Pipelined bytes wait for the answer in progress; stop reading if they pile up.
      if (this.buf.length > FAST_MAX_BODY + MAX_HEAD) this.socket.pause();
      return;
    }
    this.advance();
  }

  private ended(): void {
    this.peerEnded = true;
    if (this.phase === Phase.Busy) return; // answered first, then the socket is ended
    this.advance();
    if ((this.phase as Phase) !== Phase.Busy && !this.gone && this.socket.writable) this.socket.end();
  }

  /** Parse and dispatch the next buffered request, or hand the connection over. */
  private advance(): void {
    if (this.gone) return;
    const buf = this.buf;
    if (!buf) return;
    if (!this.current) {
      if (this.shuttingDown) return; // stopping: no new request
      const end = buf.indexOf('\r\n\r\n', this.scanFrom, 'latin1');
      if (end === -1) {
        if (buf.length > MAX_HEAD) return this.handOver();
        this.scanFrom = Math.max(0, buf.length - 3);
        return;
      }
      if (end > MAX_HEAD) return this.handOver();
      const parsed = parseHead(buf.toString('latin1', 0, end));
      if (!parsed) return this.handOver();
      this.current = parsed;
      this.headEnd = end + 4;
      this.phase = Phase.Body;
      // In flight from its head on (as node:http counts it): a graceful stop waits for its body.
      this.counted = true;
      this.hooks.started();
    }
    const cur = this.current;
    const total = this.headEnd + cur.length;
    if (buf.length < total) return;
    const body = buf.subarray(this.headEnd, total);
    this.buf = buf.length > total ? buf.subarray(total) : null;
    this.scanFrom = 0;
    this.current = null;
    this.phase = Phase.Busy;
    this.since = Date.now();
    if (cur.headers.connection !== undefined && /(^|,)\s*close\s*(,|$)/i.test(cur.headers.connection))
      this.closeRequested = true;
    this.hooks.handler(new FastRequest(cur.method, cur.url, cur.headers, this.socket, body), new FastResponse(this));
  }

  /** Whether the answer being written is the connection's last. */
  closeAfterResponse(): boolean {
    return this.closeRequested || this.shuttingDown;
  }

  write(head: string, body: string | Buffer | readonly Buffer[] | undefined): void {
    const s = this.socket;
    if (s.destroyed || !s.writable) return;
    if (body === undefined || body.length === 0) s.write(head);
    else if (typeof body === 'string') s.write(head + body);
    else {
      // Pieces (a large answer kept as parts) go out in the same corked write, uncopied.
      s.cork();
      s.write(head, 'latin1');
      if (Array.isArray(body)) for (const part of body as readonly Buffer[]) s.write(part);
      else s.write(body as Buffer);
      s.uncork();
    }
  }

  /** The answer is written: close, or go on with the next request. */
  responded(close: boolean): void {
    this.uncount();
    if (close) {
      this.detach();
      this.socket.end();
      return;
    }
    this.phase = Phase.Idle;
    this.since = Date.now();
    if (this.pendingFallback) {
      this.pendingFallback = false;
      this.handOver();
      return;
    }
    if (this.socket.isPaused()) this.socket.resume();
    if (this.buf) {
      this.phase = Phase.Head;
      this.since = Date.now();
      this.advance();
      if (this.gone) return;
    }
    if (this.peerEnded && (this.phase as Phase) !== Phase.Busy && this.socket.writable) this.socket.end();
  }

  /** Give the connection to node:http from the current request boundary on. */
  private handOver(): void {
    if (this.phase === Phase.Busy) {
      this.pendingFallback = true;
      return;
    }
    this.detach();
    this.socket.removeListener('error', this.onError);
    const rest = this.buf;
    this.buf = null;
    this.hooks.fallback(this.socket, rest, this.peerEnded);
  }

  private uncount(): void {
    if (!this.counted) return;
    this.counted = false;
    this.hooks.finished();
  }

  private detach(): void {
    if (this.gone) return;
    this.gone = true;
    this.uncount();
    this.socket.removeListener('data', this.onData);
    this.socket.removeListener('end', this.onEnd);
    this.socket.removeListener('close', this.onClose);
    this.shuttingDown = true;
    this.hooks.gone(this);
  }

  /** Daemon stopping: close now if idle, else after the request in progress (head read) is answered. */
  close(): void {
    if (this.phase === Phase.Busy || this.phase === Phase.Body) {
      this.shuttingDown = true;
      return;
    }
    this.detach();
    this.socket.destroy();
  }

  /** The timeout sweep: answer 408 and close when a request is too slow; drop idle connections. */
  sweep(now: number, t: FastTimeouts): void {
    const age = now - this.since;
    if (this.phase === Phase.Idle) {
      if (age > t.keepAliveTimeoutMs) this.close();
      return;
    }
    const late =
      (this.phase === Phase.Head && age > t.headersTimeoutMs) ||
      (this.phase === Phase.Body && age > t.requestTimeoutMs);
    if (!late) return;
    this.detach();
    if (this.socket.writable)
      this.socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    this.socket.destroySoon();
  }
}

/**
 * Parse a request head (without its final CRLFCRLF); null when the fast lane should not take it.
 * Header names are lower-cased; a duplicate header, a Transfer-Encoding, an Expect or an Upgrade
 * sends the request to node:http.
 */
export function parseHead(head: string): RequestHead | null {
  let eol = head.indexOf('\r\n');
  if (eol === -1) eol = head.length;
  const sp1 = head.indexOf(' ');
  const sp2 = sp1 === -1 ? -1 : head.indexOf(' ', sp1 + 1);
  if (sp1 <= 0 || sp2 === -1 || sp2 > eol) return null;
  const method = head.slice(0, sp1);
  if (!FAST_METHODS.has(method)) return null;
  if (eol - sp2 - 1 !== 8 || !head.startsWith('HTTP/1.1', sp2 + 1)) return null;
  const url = head.slice(sp1 + 1, sp2);
  if (!TARGET.test(url)) return null;
  // A plain object (fast properties): a name found on Object.prototype ("constructor", "__proto__")
  // reads as a duplicate below and sends the request to node:http.
  const headers: Record<string, string> = {};
  let length = 0;
  let count = 0;
  let pos = eol + 2;
  while (pos < head.length) {
    let end = head.indexOf('\r\n', pos);
    if (end === -1) end = head.length;
    if (++count > MAX_HEADERS) return null;
    // Name: token characters up to the colon (none may be a control, space, LF or CR).
    let colon = pos;
    for (; colon < end; colon++) {
      const c = head.charCodeAt(colon);
      if (c === 58) break; // ':'
      if (c > 127 || TOKEN_CHAR[c] !== 1) return null;
    }
    if (colon === pos || colon === end) return null;
    // Value: trimmed of spaces and tabs; no control characters but HTAB (a bare CR or LF included).
    let a = colon + 1;
    let b = end;
    while (a < b && (head.charCodeAt(a) === 32 || head.charCodeAt(a) === 9)) a++;
    while (b > a && (head.charCodeAt(b - 1) === 32 || head.charCodeAt(b - 1) === 9)) b--;
    for (let k = a; k < b; k++) {
      const c = head.charCodeAt(k);
      if ((c < 32 && c !== 9) || c === 127) return null;
    }
    const name = lowerName(head, pos, colon);
    const value = head.slice(a, b);
    if (headers[name] !== undefined) return null;
    switch (name) {
      case 'content-length':
        if (!LENGTH.test(value)) return null;
        length = Number(value);
        if (length > FAST_MAX_BODY) return null;
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return null;
      case 'connection':
        if (/upgrade/i.test(value)) return null;
        break;
    }
    headers[name] = value;
    pos = end + 2;
  }
  // HTTP/1.1 requires Host; node:http answers its absence with 400 (as Go's server, and so Vault, does).
  if (headers.host === undefined) return null;
  return { method, url, headers, length };
}

/** Token characters of RFC 9110 (header names). */
const TOKEN_CHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
  TOKEN_CHAR[c.charCodeAt(0)] = 1;

/** Common header names as clients write them, mapped to lower case without a new string. */
const KNOWN_NAMES = new Map<string, string>();
for (const n of [
  'Host',
  'User-Agent',
  'Accept',
  'Accept-Encoding',
  'Content-Type',
  'Content-Length',
  'Connection',
  'X-Vault-Token',
  'X-Vault-Request',
  'X-Vault-Namespace',
  'Authorization',
]) {
  KNOWN_NAMES.set(n, n.toLowerCase());
  KNOWN_NAMES.set(n.toLowerCase(), n.toLowerCase());
}

function lowerName(head: string, from: number, to: number): string {
  const raw = head.slice(from, to);
  return KNOWN_NAMES.get(raw) ?? raw.toLowerCase();
}
