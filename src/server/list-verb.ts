/**
 * Node's HTTP parser (llhttp) rejects the method `LIST` and drops the connection, yet hvac and
 * node-vault send it. We watch each connection's bytes, find where every request starts (tracking
 * Content-Length and chunked bodies, so keep-alive and pipelining work), and rewrite a leading
 * `LIST ` to `LOCK ` (same length, a method llhttp knows). The router maps LOCK back to LIST;
 * a real LOCK request is first renamed to `MOVE` so it still answers 405.
 */
import type { Socket } from 'node:net';

const enum State {
  Start,
  Headers,
  Body,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  Passthrough,
}

const MAX_HEADER_TRACK = 128 * 1024;

/** Per-connection byte rewriter. `push` returns the bytes to hand to the HTTP parser. */
export class ListVerbRewriter {
  private state = State.Start;
  private held: Buffer | null = null;
  private header = '';
  private remaining = 0;
  private line = '';
  private lineLen = 0;

  push(chunk: Buffer): Buffer {
    if (this.state === State.Passthrough) return chunk;
    let buf = this.held ? Buffer.concat([this.held, chunk]) : chunk;
    this.held = null;
    let i = 0;
    let emitUpTo = buf.length;
    while (i < buf.length) {
      switch (this.state) {
        case State.Start: {
          // Skip stray CRLF between requests (RFC 9112 2.2).
          if (buf[i] === 13 || buf[i] === 10) {
            i++;
            break;
          }
          if (buf.length - i < 5) {
            // Not enough bytes to decide; hold them for the next chunk.
            this.held = Buffer.from(buf.subarray(i));
            emitUpTo = i;
            i = buf.length;
            break;
          }
          if (buf[i] === 0x4c && buf[i + 4] === 0x20) {
            const word = buf.toString('latin1', i, i + 4);
            if (word === 'LIST' || word === 'LOCK') {
              if (buf === chunk) buf = Buffer.from(buf); // never mutate the caller's buffer
              buf.write(word === 'LIST' ? 'LOCK' : 'MOVE', i, 'latin1');
            }
          }
          this.state = State.Headers;
          this.header = '';
          this.lineLen = 0;
          break;
        }
        case State.Headers: {
          // Scan byte by byte for the empty line ending the headers (CRLF or bare LF), so a
          // terminator split across packets is found and never one belonging to a later request.
          const from = i;
          let done = false;
          while (i < buf.length) {
            const b = buf[i++];
            if (b === 10) {
              if (this.lineLen === 0) {
                done = true;
                break;
              }
              this.lineLen = 0;
            } else if (b !== 13) this.lineLen++;
          }
          this.header += buf.toString('latin1', from, i);
          if (!done) {
            if (this.header.length > MAX_HEADER_TRACK) this.state = State.Passthrough;
            break;
          }
          this.beginBody();
          break;
        }
        case State.Body: {
          const n = Math.min(this.remaining, buf.length - i);
          i += n;
          this.remaining -= n;
          if (this.remaining === 0) this.state = State.Start;
          break;
        }
        case State.ChunkSize:
        case State.Trailers: {
          const nl = buf.indexOf(10, i);
          const stop = nl === -1 ? buf.length : nl + 1;
          this.line += buf.toString('latin1', i, stop);
          i = stop;
          if (nl === -1) {
            if (this.line.length > 4096) this.state = State.Passthrough;
            break;
          }
          const line = this.line.trim();
          this.line = '';
          if (this.state === State.Trailers) {
            if (line === '') this.state = State.Start;
            break;
          }
          const size = parseInt(line.split(';')[0]!, 16);
          if (!Number.isFinite(size)) {
            this.state = State.Passthrough;
            break;
          }
          if (size === 0) this.state = State.Trailers;
          else {
            this.remaining = size;
            this.state = State.ChunkData;
          }
          break;
        }
        case State.ChunkData: {
          const n = Math.min(this.remaining, buf.length - i);
          i += n;
          this.remaining -= n;
          if (this.remaining === 0) {
            this.state = State.ChunkDataEnd;
            this.remaining = 2;
          }
          break;
        }
        case State.ChunkDataEnd: {
          const n = Math.min(this.remaining, buf.length - i);
          i += n;
          this.remaining -= n;
          if (this.remaining === 0) this.state = State.ChunkSize;
          break;
        }
        case State.Passthrough:
          i = buf.length;
          break;
      }
    }
    return emitUpTo === buf.length ? buf : buf.subarray(0, emitUpTo);
  }

  private beginBody(): void {
    const h = this.header.toLowerCase();
    const upgrade = /\nupgrade:/.test(h) || h.startsWith('connect ');
    if (upgrade) {
      this.state = State.Passthrough;
      return;
    }
    if (/\ntransfer-encoding:[^\r\n]*chunked/.test(h)) {
      this.state = State.ChunkSize;
      this.line = '';
      return;
    }
    const m = /\ncontent-length:[ \t]*(\d+)/.exec(h);
    const len = m ? Number(m[1]) : 0;
    if (len > 0) {
      this.remaining = len;
      this.state = State.Body;
    } else this.state = State.Start;
  }
}

/**
 * Prepare a freshly accepted socket so Node's HTTP server sees rewritten bytes: mark the handle as
 * consumed (so the parser reads through 'data' events rather than straight from the handle) and
 * rewrite every 'data' payload.
 */
export function installListVerb(socket: Socket): void {
  const rw = new ListVerbRewriter();
  const handle = (socket as unknown as { _handle?: { _consumed?: boolean } })._handle;
  if (handle) handle._consumed = true;
  const emit = socket.emit as (this: Socket, event: string | symbol, ...args: unknown[]) => boolean;
  socket.emit = function (this: Socket, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'data') {
      const out = rw.push(args[0] as Buffer);
      if (out.length === 0) return true;
      return emit.call(this, event, out);
    }
    return emit.call(this, event, ...args);
  } as typeof socket.emit;
}
