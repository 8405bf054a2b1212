/**
 * A lean HTTP/1.1 load generator: `connections` keep-alive connections, each sending the same
 * pre-encoded request again as soon as the previous answer is complete (one request in flight per
 * connection, no pipelining), for `durationSec` seconds.
 *
 * Used with KEYHOLD_BENCH_CLIENT=lean (autocannon otherwise). It parses only what it must (status
 * line, Content-Length or chunked framing): ~22 µs of CPU per request on the 2-core bench machine
 * against autocannon's ~27 µs, most of the rest being the kernel's socket work. Requests then reach
 * the server one per loop turn rather than in bursts, which costs the server more per request
 * (docs/benchmarks.md). Answers are counted only when complete and well framed; anything malformed
 * is an error and the connection is replaced.
 */
import { connect } from 'node:net';

const CRLF2 = Buffer.from('\r\n\r\n');

/** The request bytes of `opts` ({method, path, headers, body}). */
export function encodeRequest({ method = 'GET', path, headers = {}, body }) {
  const payload = body === undefined ? null : Buffer.isBuffer(body) ? body : Buffer.from(String(body));
  let head = `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n`;
  for (const [k, v] of Object.entries(headers))
    if (!/^(host|connection|content-length)$/i.test(k)) head += `${k}: ${v}\r\n`;
  if (payload) head += `Content-Length: ${payload.length}\r\n`;
  head += '\r\n';
  return payload ? Buffer.concat([Buffer.from(head, 'latin1'), payload]) : Buffer.from(head, 'latin1');
}

/**
 * Parse one response at the start of `buf`: {status, end, close} once complete; null when more
 * bytes are needed, or {status, need} when the head says how long the whole answer is (then the
 * caller need not parse again before it has `need` bytes); throws on a malformed answer.
 */
export function parseResponse(buf) {
  const headEnd = buf.indexOf(CRLF2);
  if (headEnd < 0) {
    if (buf.length > 64 * 1024) throw new Error('response head over 64 KiB');
    return null;
  }
  if (buf.toString('latin1', 0, 9) !== 'HTTP/1.1 ') throw new Error('not an HTTP/1.1 response');
  const status = (buf[9] - 48) * 100 + (buf[10] - 48) * 10 + (buf[11] - 48);
  if (!(status >= 100 && status < 600)) throw new Error('bad status line');
  const head = buf.toString('latin1', 0, headEnd).toLowerCase();
  const bodyStart = headEnd + 4;
  const cl = head.indexOf('\r\ncontent-length:');
  if (cl >= 0) {
    const lineEnd = head.indexOf('\r\n', cl + 2);
    const len = Number(head.slice(cl + 17, lineEnd < 0 ? undefined : lineEnd).trim());
    if (!Number.isSafeInteger(len) || len < 0) throw new Error('bad content-length');
    return buf.length >= bodyStart + len
      ? { status, end: bodyStart + len, close: head.includes('\r\nconnection: close') }
      : { status, need: bodyStart + len };
  }
  if (head.includes('\r\ntransfer-encoding: chunked')) {
    let at = bodyStart;
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at, 'latin1');
      if (lineEnd < 0) return null;
      const size = Number.parseInt(buf.toString('latin1', at, lineEnd), 16);
      if (!Number.isFinite(size) || size < 0) throw new Error('bad chunk size');
      if (size === 0) {
        // Last chunk: no trailers expected; the final CRLF ends the message.
        if (buf.length < lineEnd + 4) return null;
        return { status, end: lineEnd + 4, close: head.includes('\r\nconnection: close') };
      }
      if (buf.length < lineEnd + 2 + size + 2) return null;
      at = lineEnd + 2 + size + 2;
    }
  }
  // No body framing: only valid for answers without a body.
  if (status === 204 || status === 304 || status < 200) return { status, end: bodyStart, close: false };
  throw new Error('response without Content-Length or chunked encoding');
}

/**
 * Run the load: {target: {socketPath} | {host, port}, method, path, headers, body, connections,
 * durationSec, timeoutSec, onResponse(status, ms)} -> {durationSec, errors, timeouts}.
 */
export function runLean(opts) {
  const request = encodeRequest(opts);
  const timeoutMs = (opts.timeoutSec ?? 30) * 1000;
  const durationMs = opts.durationSec * 1000;
  const started = performance.now();
  const deadline = started + durationMs;
  let errors = 0;
  let timeouts = 0;
  let open = 0;
  return new Promise((resolve) => {
    const finish = () => {
      if (--open === 0) resolve({ durationSec: (performance.now() - started) / 1000, errors, timeouts });
    };
    const start = () => {
      open++;
      const sock = opts.target.socketPath
        ? connect(opts.target.socketPath)
        : connect(opts.target.port, opts.target.host);
      sock.setNoDelay(true);
      // Bytes of the answer so far: chunks kept apart until the answer is known to be complete, so
      // a large answer arriving in many reads is joined once, not once per read.
      let chunks = [];
      let have = 0;
      let need = 0;
      let sentAt = 0;
      let timer = null;
      let done = false;
      const end = (replace) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        sock.destroy();
        finish();
        if (replace && performance.now() < deadline) setTimeout(start, 5);
      };
      const send = () => {
        if (performance.now() >= deadline) return end(false);
        sentAt = performance.now();
        clearTimeout(timer);
        timer = setTimeout(() => {
          timeouts++;
          end(true);
        }, timeoutMs);
        sock.write(request);
      };
      sock.on('connect', send);
      sock.on('error', () => {
        errors++;
        end(true);
      });
      sock.on('close', () => end(performance.now() < deadline));
      sock.on('data', (chunk) => {
        chunks.push(chunk);
        have += chunk.length;
        if (have < need) return;
        const pending = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, have);
        chunks = [pending];
        let r;
        try {
          r = parseResponse(pending);
        } catch {
          errors++;
          return end(true);
        }
        if (!r) return;
        if (r.need !== undefined) {
          need = r.need;
          return;
        }
        const ms = performance.now() - sentAt;
        if (r.end !== pending.length) {
          // One request in flight: bytes past its answer mean the server sent something we did not ask for.
          errors++;
          return end(true);
        }
        chunks = [];
        have = 0;
        need = 0;
        opts.onResponse(r.status, ms);
        if (r.close) return end(true);
        send();
      });
    };
    for (let i = 0; i < opts.connections; i++) start();
  });
}
