import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { encodeRequest, parseResponse, runLean } from '../../../bench/lib/lean-load.js';

describe('lean load generator', () => {
  it('frames responses by Content-Length and by chunked encoding, and waits for missing bytes', () => {
    const cl = Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: 5\r\n\r\nhello');
    expect(parseResponse(cl)).toEqual({ status: 200, end: cl.length, close: false });
    expect(parseResponse(cl.subarray(0, cl.length - 1))).toEqual({ status: 200, need: cl.length });
    expect(parseResponse(cl.subarray(0, 20))).toBeNull();
    const chunked = Buffer.from(
      'HTTP/1.1 403 Forbidden\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n',
    );
    expect(parseResponse(chunked)).toEqual({ status: 403, end: chunked.length, close: true });
    expect(parseResponse(chunked.subarray(0, chunked.length - 2))).toBeNull();
    expect(parseResponse(Buffer.from('HTTP/1.1 204 No Content\r\n\r\n'))).toMatchObject({ status: 204 });
  });

  it('refuses malformed answers', () => {
    expect(() => parseResponse(Buffer.from('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n'))).toThrow(/HTTP\/1.1/);
    expect(() => parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'))).toThrow(/content-length/);
    expect(() => parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nX: y\r\n\r\nbody'))).toThrow(/without Content-Length/);
  });

  it('encodes one request with the body length and headers given', () => {
    const r = encodeRequest({
      method: 'POST',
      path: '/v1/x',
      headers: { 'X-Vault-Token': 't', 'Content-Length': '999' },
      body: '{"a":1}',
    }).toString();
    expect(r).toBe(
      'POST /v1/x HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\nX-Vault-Token: t\r\nContent-Length: 7\r\n\r\n{"a":1}',
    );
  });

  it('counts exactly the answers a node:http server sent, with one request in flight per connection', async () => {
    let served = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    const server = createServer((req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        served++;
        setImmediate(() => {
          inFlight--;
          // Every third answer chunked (no Content-Length), the others with one.
          if (served % 3 === 0) {
            res.writeHead(served % 2 ? 201 : 200);
            res.write(body.slice(0, 2));
            res.end(body.slice(2));
          } else res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
        });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const statuses: Record<number, number> = {};
    const out = await runLean({
      target: { host: '127.0.0.1', port },
      method: 'POST',
      path: '/v1/echo',
      body: '{"hello":"world"}',
      headers: { 'Content-Type': 'application/json' },
      connections: 4,
      durationSec: 0.5,
      onResponse: (s: number) => (statuses[s] = (statuses[s] ?? 0) + 1),
    });
    await new Promise((r) => server.close(r));
    const counted = Object.values(statuses).reduce((a, b) => a + b, 0);
    expect(out.errors).toBe(0);
    expect(counted).toBe(served);
    expect(counted).toBeGreaterThan(50);
    expect(maxInFlight).toBeLessThanOrEqual(4);
    expect(statuses[200]).toBeGreaterThan(0);
  });

  it('takes large answers that arrive in many reads (Content-Length and chunked)', async () => {
    const big = Buffer.alloc(300_000, 'x');
    let served = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        served++;
        if (served % 2) res.writeHead(200, { 'Content-Length': String(big.length) }).end(big);
        else {
          res.writeHead(200);
          for (let i = 0; i < 10; i++) res.write(big.subarray(i * 30_000, (i + 1) * 30_000));
          res.end();
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    let ok = 0;
    const out = await runLean({
      target: { host: '127.0.0.1', port },
      path: '/big',
      connections: 2,
      durationSec: 0.4,
      onResponse: (s: number) => (ok += s === 200 ? 1 : 0),
    });
    await new Promise((r) => server.close(r));
    expect(out.errors).toBe(0);
    expect(ok).toBe(served);
    expect(ok).toBeGreaterThan(4);
  });
});
