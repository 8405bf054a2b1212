/**
 * Open a streamed answer (sys/monitor) on either lane: node:http's ServerResponse writes chunks
 * itself; the fast lane answers one request with one write, so a stream there is written on the
 * socket directly (chunked) and the connection closes when the stream ends.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Reply, ReplyStream } from '../framework/route.js';
import type { ResponseSink } from './respond.js';
import type { InFlightFlow, InFlightRequests } from './in-flight.js';

/** Start a 200 stream of `contentType` answering the request on `socket` through `res`. */
export function openStream(socket: Socket, res: ResponseSink, contentType: string): ReplyStream {
  const headers = { 'Content-Type': contentType, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };
  if (
    typeof (res as Partial<ServerResponse>).write === 'function' &&
    typeof (res as Partial<ServerResponse>).flushHeaders === 'function'
  ) {
    const r = res as unknown as ServerResponse;
    r.writeHead(200, headers);
    r.flushHeaders();
    return {
      write: (t) => !r.destroyed && r.write(t),
      end: () => r.end(),
      onClose: (fn) => r.once('close', fn),
    };
  }
  let head = 'HTTP/1.1 200 OK\r\n';
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  socket.write(head + 'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n');
  return {
    write: (t) => {
      if (socket.destroyed) return false;
      const b = Buffer.from(t, 'utf8');
      if (b.length === 0) return true;
      socket.write(b.length.toString(16) + '\r\n');
      socket.write(b);
      return socket.write('\r\n') || true;
    },
    end: () => {
      if (!socket.destroyed) socket.end('0\r\n\r\n');
    },
    onClose: (fn) => socket.once('close', fn),
  };
}

/**
 * The router's send step for a streamed answer: open the stream and hand it to the handler; the
 * request stays in flight (sys/in-flight-req) until the stream closes.
 */
export function startStream(
  f: InFlightFlow & { req: { socket: Socket }; res: ResponseSink; streaming: boolean },
  stream: NonNullable<Reply['stream']>,
  inFlight: InFlightRequests | undefined,
): void {
  const out = openStream(f.req.socket, f.res, stream.contentType);
  if (inFlight) {
    f.streaming = true;
    out.onClose(() => inFlight.delete(f));
  }
  stream.start(out);
}
