/** Raw HTTP/1.1 over a socket, for LIST-verb and keep-alive tests (no Node HTTP client involved). */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** One parsed response. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A connection that collects bytes and parses responses in order. */
export class RawConn {
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  closed = false;
  constructor(readonly socket: Socket) {
    socket.on('data', (c: Buffer) => {
      this.buf = Buffer.concat([this.buf, c]);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => {
      this.closed = true;
      this.wake();
    });
  }
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  private async more(deadline: number): Promise<void> {
    if (this.closed)
      throw new Error(`connection closed; unparsed: ${JSON.stringify(this.buf.toString('latin1').slice(0, 200))}`);
    if (Date.now() > deadline) throw new Error('timed out waiting for a response');
    await new Promise<void>((r) => {
      this.waiters.push(r);
      setTimeout(r, 200);
    });
  }
  write(data: string | Buffer): Promise<void> {
    return new Promise((r, j) => this.socket.write(data, (e) => (e ? j(e) : r())));
  }
  /** Read the next complete response (Content-Length, chunked, or no body for 204/304). */
  async read(timeoutMs = 15_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    let headEnd: number;
    while ((headEnd = this.buf.indexOf('\r\n\r\n')) === -1) await this.more(deadline);
    const head = this.buf.toString('latin1', 0, headEnd).split('\r\n');
    const status = Number(head[0]!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    let pos = headEnd + 4;
    let body = Buffer.alloc(0);
    if (status === 204 || status === 304) {
      /* no body */
    } else if (headers['transfer-encoding']?.includes('chunked')) {
      const parts: Buffer[] = [];
      for (;;) {
        let nl: number;
        while ((nl = this.buf.indexOf('\r\n', pos)) === -1) await this.more(deadline);
        const size = parseInt(this.buf.toString('latin1', pos, nl), 16);
        while (this.buf.length < nl + 2 + size + 2) await this.more(deadline);
        parts.push(this.buf.subarray(nl + 2, nl + 2 + size));
        pos = nl + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else {
      const len = Number(headers['content-length'] ?? 0);
      while (this.buf.length < pos + len) await this.more(deadline);
      body = this.buf.subarray(pos, pos + len);
      pos += len;
    }
    this.buf = this.buf.subarray(pos);
    return { status, headers, body: body.toString('utf8') };
  }
  close(): void {
    this.socket.destroy();
  }
}

/** Open a raw connection to a Unix socket path or an http(s)://host:port address. */
export async function rawConnect(target: string): Promise<RawConn> {
  let sock: Socket;
  if (target.startsWith('https://')) {
    const u = new URL(target);
    sock = tlsConnect({ host: u.hostname, port: Number(u.port), rejectUnauthorized: false });
    await new Promise<void>((r, j) => {
      sock.once('secureConnect', () => r());
      sock.once('error', j);
    });
  } else if (target.startsWith('http://')) {
    const u = new URL(target);
    sock = netConnect({ host: u.hostname, port: Number(u.port) });
    await new Promise<void>((r, j) => {
      sock.once('connect', () => r());
      sock.once('error', j);
    });
  } else {
    sock = netConnect(target);
    await new Promise<void>((r, j) => {
      sock.once('connect', () => r());
      sock.once('error', j);
    });
  }
  sock.setNoDelay(true);
  return new RawConn(sock);
}

/** Build one request's bytes. */
export function rawRequest(
  method: string,
  path: string,
  opts: { token?: string; body?: string; chunked?: boolean; close?: boolean; headers?: Record<string, string> } = {},
): string {
  const h = [`${method} ${path} HTTP/1.1`, 'Host: keyhold'];
  if (opts.token) h.push(`X-Vault-Token: ${opts.token}`);
  for (const [k, v] of Object.entries(opts.headers ?? {})) h.push(`${k}: ${v}`);
  if (opts.close) h.push('Connection: close');
  if (opts.body !== undefined && opts.chunked) {
    h.push('Content-Type: application/json', 'Transfer-Encoding: chunked');
    const b = Buffer.from(opts.body);
    const half = Math.floor(b.length / 2);
    const chunks = [b.subarray(0, half), b.subarray(half)]
      .filter((c) => c.length)
      .map((c) => `${c.length.toString(16)}\r\n${c.toString('latin1')}\r\n`);
    return `${h.join('\r\n')}\r\n\r\n${chunks.join('')}0\r\n\r\n`;
  }
  if (opts.body !== undefined)
    h.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(opts.body)}`);
  return `${h.join('\r\n')}\r\n\r\n${opts.body ?? ''}`;
}
