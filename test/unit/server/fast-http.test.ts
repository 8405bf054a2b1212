import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startListeners, type Listeners } from '../../../src/server/http.js';
import { FAST_MAX_BODY, parseHead, type FastRequest, type FastResponse } from '../../../src/server/fast-http.js';
import { rawConnect, rawRequest } from '../../integration/foundation-raw-http.js';

describe('fast lane: which request heads it takes', () => {
  const base = 'POST /v1/transit/encrypt/k HTTP/1.1\r\nHost: x\r\nX-Vault-Token: t\r\nContent-Length: 12';

  it('parses a plain request: method, target, lower-cased headers, body length', () => {
    expect(parseHead(base)).toEqual({
      method: 'POST',
      url: '/v1/transit/encrypt/k',
      headers: { host: 'x', 'x-vault-token': 't', 'content-length': '12' },
      length: 12,
    });
    expect(parseHead('LIST /v1/transit/keys HTTP/1.1\r\nHost: x')?.method).toBe('LIST');
    expect(parseHead('GET /v1/sys/health?x=1 HTTP/1.1\r\nhost: h')).toEqual({
      method: 'GET',
      url: '/v1/sys/health?x=1',
      headers: { host: 'h' },
      length: 0,
    });
    // Optional whitespace around values is not part of them.
    expect(parseHead('GET / HTTP/1.1\r\nHost: h\r\nX-A: \t v \t')?.headers['x-a']).toBe('v');
  });

  it.each([
    ['a chunked body', `${base}\r\nTransfer-Encoding: chunked`],
    ['Expect: 100-continue', `${base}\r\nExpect: 100-continue`],
    ['an Upgrade', 'GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket'],
    ['HTTP/1.0', 'GET / HTTP/1.0'],
    ['HTTP/1.1 with trailing junk', 'GET / HTTP/1.10'],
    ['HEAD', 'HEAD /v1/sys/health HTTP/1.1'],
    ['PATCH', 'PATCH /v1/secret/data/a HTTP/1.1'],
    ['LOCK (answered 405 by node:http)', 'LOCK /v1/x HTTP/1.1'],
    ['a lower-case method', 'get / HTTP/1.1'],
    ['a target that is not origin-form', 'GET http://x/ HTTP/1.1'],
    ['a space in the target', 'GET /a b HTTP/1.1'],
    ['a non-ASCII target', 'GET /\u00e9 HTTP/1.1'],
    ['a duplicate header', `${base}\r\nX-Vault-Token: u`],
    ['a duplicate Content-Length', `${base}\r\ncontent-length: 12`],
    ['a non-numeric Content-Length', 'POST / HTTP/1.1\r\nContent-Length: 1e3'],
    ['a negative Content-Length', 'POST / HTTP/1.1\r\nContent-Length: -1'],
    ['a body over the fast-lane limit', `POST / HTTP/1.1\r\nContent-Length: ${FAST_MAX_BODY + 1}`],
    ['a folded header line', `${base}\r\n continued`],
    ['a space before the colon', 'GET / HTTP/1.1\r\nX-A : x'],
    ['a header without a colon', 'GET / HTTP/1.1\r\nX-A'],
    ['a control character in a value', 'GET / HTTP/1.1\r\nX-A: a\u0001b'],
    ['a bare LF inside the head', 'GET / HTTP/1.1\r\nX-A: a\nX-B: b'],
    ['a bare CR inside a value', 'GET / HTTP/1.1\r\nX-A: a\rb'],
    ['a header named like an Object.prototype member', 'GET / HTTP/1.1\r\nHost: h\r\n__proto__: x'],
    ['no Host header (node:http answers 400)', 'GET / HTTP/1.1\r\nX-Vault-Token: t'],
  ])('leaves %s to node:http', (what, head) => {
    // Every case but the Host one carries a Host header, so it is refused for its own reason.
    const withHost =
      what.startsWith('no Host') || /\r\nhost:/i.test(head)
        ? head
        : head.replace('\r\n', '\r\nHost: h\r\n').replace(/^([^\r]*)$/, '$1\r\nHost: h');
    expect(parseHead(withHost)).toBeNull();
  });

  it('takes each refused case once its offending part is gone', () => {
    expect(
      parseHead('POST /v1/transit/encrypt/k HTTP/1.1\r\nHost: x\r\nX-Vault-Token: t\r\nContent-Length: 12'),
    ).not.toBeNull();
    expect(parseHead('GET / HTTP/1.1\r\nHost: h\r\nX-A: x')).not.toBeNull();
    expect(parseHead('GET / HTTP/1.1\r\nHost: h\r\nX-A: ab')).not.toBeNull();
    expect(parseHead(`POST / HTTP/1.1\r\nHost: h\r\nContent-Length: ${FAST_MAX_BODY}`)?.length).toBe(FAST_MAX_BODY);
  });

  it('leaves requests with more than 100 header lines to node:http', () => {
    const many = ['Host: h', ...Array.from({ length: 100 }, (_, i) => `X-H${i}: v`)].join('\r\n');
    expect(parseHead(`GET / HTTP/1.1\r\n${many}`)).toBeNull();
    expect(parseHead(`GET / HTTP/1.1\r\n${many.split('\r\n').slice(0, 100).join('\r\n')}`)).not.toBeNull();
  });
});

describe('fast lane on a listener: answers, hands over, keeps order', () => {
  const LIMITS = {
    headersTimeoutMs: 400,
    requestTimeoutMs: 800,
    keepAliveTimeoutMs: 1000,
    maxConnections: 32,
    checkIntervalMs: 100,
  };
  let dir: string;
  let listeners: Listeners;
  let socket: string;
  let tcp: string;

  /** Both lanes answer with who answered, the method, the path and the body they received. */
  function answer(
    lane: string,
    method: string,
    url: string,
    body: Buffer,
    res: { writeHead(s: number, h: Record<string, string | number>): unknown; end(b: string): unknown },
  ) {
    const text = JSON.stringify({ lane, method, url, body: body.toString('utf8') });
    // A path with /slow/ answers after a delay, so pipelined requests behind it must wait.
    const send = () => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (url.includes('/slow/')) setTimeout(send, 60);
    else send();
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keyhold-fast-'));
    socket = join(dir, 's.sock');
    listeners = await startListeners(
      [
        { type: 'unix', path: socket },
        { type: 'tcp', address: '127.0.0.1:0' },
      ],
      (req: IncomingMessage, res: ServerResponse) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => answer('node', req.method!, req.url!, Buffer.concat(chunks), res));
      },
      LIMITS,
      (req: FastRequest, res: FastResponse) => answer('fast', req.method, req.url, req.body, res),
    );
    tcp = listeners.addresses.find((a) => a.startsWith('http://'))!;
  });

  afterAll(async () => {
    await listeners.close(200);
    rmSync(dir, { recursive: true, force: true });
  });

  for (const transport of ['unix', 'tcp'] as const) {
    it(`answers plain requests itself on one keep-alive ${transport} connection, with the body byte for byte`, async () => {
      const c = await rawConnect(transport === 'unix' ? socket : tcp);
      try {
        const body = JSON.stringify({ plaintext: 'aGVsbG8=', note: 'caf\u00e9 \u2603' });
        for (const method of ['POST', 'PUT', 'GET', 'DELETE', 'LIST']) {
          await c.write(
            rawRequest(method, `/v1/a/${method}`, { token: 't', body: method === 'GET' ? undefined : body }),
          );
          const r = await c.read();
          expect(r.status).toBe(200);
          expect(r.headers['connection']).toBe('keep-alive');
          expect(r.headers['date']).toMatch(/GMT$/);
          expect(JSON.parse(r.body)).toEqual({
            lane: 'fast',
            method,
            url: `/v1/a/${method}`,
            body: method === 'GET' ? '' : body,
          });
        }
        expect(c.closed).toBe(false);
      } finally {
        c.close();
      }
    });
  }

  it('hands the connection to node:http at the first request it does not take, bytes and order intact', async () => {
    const c = await rawConnect(socket);
    try {
      const body = JSON.stringify({ a: 1 });
      // Pipelined: fast, fast (slow to answer), then chunked (node:http), then plain again (node:http now).
      await c.write(
        rawRequest('POST', '/v1/one', { body }) +
          rawRequest('POST', '/v1/slow/two', { body }) +
          rawRequest('POST', '/v1/three', { body, chunked: true }) +
          rawRequest('LIST', '/v1/four') +
          rawRequest('POST', '/v1/five', { body }),
      );
      const rs = [];
      for (let i = 0; i < 5; i++) rs.push(JSON.parse((await c.read()).body));
      expect(rs.map((r) => [r.lane, r.url])).toEqual([
        ['fast', '/v1/one'],
        ['fast', '/v1/slow/two'],
        ['node', '/v1/three'],
        ['node', '/v1/four'],
        ['node', '/v1/five'],
      ]);
      expect(rs[2].body).toBe(body);
      // LIST reached node:http rewritten to LOCK (list-verb.ts), which the router maps back to list.
      expect(rs[3].method).toBe('LOCK');
    } finally {
      c.close();
    }
  });

  it('hands over a request whose head arrives one byte at a time', async () => {
    const c = await rawConnect(socket);
    try {
      const bytes = Buffer.from('GET /v1/x HTTP/1.0\r\nHost: x\r\n\r\n');
      for (const b of bytes) {
        await c.write(Buffer.from([b]));
        await new Promise((r) => setImmediate(r));
      }
      const r = await c.read();
      expect(JSON.parse(r.body)).toMatchObject({ lane: 'node', url: '/v1/x' });
    } finally {
      c.close();
    }
  });

  it('hands over Expect: 100-continue, so the client gets its 100 and then the answer', async () => {
    const c = await rawConnect(socket);
    try {
      await c.write('POST /v1/exp HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n');
      const cont = await c.read();
      expect(cont.status).toBe(100);
      await c.write('abcd');
      const r = await c.read();
      expect(JSON.parse(r.body)).toEqual({ lane: 'node', method: 'POST', url: '/v1/exp', body: 'abcd' });
    } finally {
      c.close();
    }
  });

  it('leaves a request without Host to node:http, which answers 400 as Go (and Vault) does', async () => {
    const c = await rawConnect(socket);
    try {
      await c.write('GET /v1/nohost HTTP/1.1\r\nX-Vault-Token: t\r\n\r\n');
      expect((await c.read()).status).toBe(400);
    } finally {
      c.close();
    }
  });

  it('hands over a body over the fast-lane limit', async () => {
    const c = await rawConnect(socket);
    try {
      const big = 'x'.repeat(FAST_MAX_BODY + 10);
      await c.write(rawRequest('POST', '/v1/big', { body: big }));
      const r = await c.read();
      const got = JSON.parse(r.body);
      expect(got.lane).toBe('node');
      expect(got.body.length).toBe(big.length);
    } finally {
      c.close();
    }
  });

  it('closes after answering Connection: close', async () => {
    const c = await rawConnect(socket);
    await c.write(rawRequest('GET', '/v1/bye', { close: true }));
    const r = await c.read();
    expect(r.headers['connection']).toBe('close');
    expect(JSON.parse(r.body).lane).toBe('fast');
    for (let i = 0; i < 50 && !c.closed; i++) await new Promise((res) => setTimeout(res, 20));
    expect(c.closed).toBe(true);
  });

  /** Write `bytes` and FIN at once; resolve with everything the server sent until it ended. */
  function sendThenHalfClose(bytes: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const s = connect(socket, () => s.end(bytes));
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      s.on('error', reject);
    });
  }

  it('answers requests sent just before the client half-closed, then ends the connection', async () => {
    const got = await sendThenHalfClose(rawRequest('GET', '/v1/slow/a') + rawRequest('GET', '/v1/b'));
    expect(got.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(got.indexOf('/v1/slow/a')).toBeLessThan(got.indexOf('/v1/b'));
  });

  it('hands over a half-closed connection whose last request it does not take', async () => {
    const got = await sendThenHalfClose(
      rawRequest('GET', '/v1/slow/a') + rawRequest('POST', '/v1/c', { body: '{}', chunked: true }),
    );
    expect(got).toContain('"lane":"fast","method":"GET","url":"/v1/slow/a"');
    expect(got).toContain('"lane":"node","method":"POST","url":"/v1/c","body":"{}"');
  });

  it('answers 408 and closes when the head trickles in past the headers timeout', async () => {
    const c = await rawConnect(socket);
    const started = Date.now();
    await c.write('GET /v1/x HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => !c.closed && c.socket.write('X-Pad: 1\r\n'), 50);
    try {
      const r = await c.read(5000);
      expect(r.status).toBe(408);
      for (let i = 0; i < 50 && !c.closed; i++) await new Promise((res) => setTimeout(res, 20));
      expect(c.closed).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(LIMITS.headersTimeoutMs);
    } finally {
      clearInterval(drip);
      c.close();
    }
  });

  it('closes when a body trickles in past the request timeout, and drops idle keep-alive connections', async () => {
    const slow = await rawConnect(socket);
    await slow.write('POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{');
    const drip = setInterval(() => !slow.closed && slow.socket.write(' '), 50);
    const idle = await rawConnect(socket);
    await idle.write(rawRequest('GET', '/v1/once'));
    expect((await idle.read()).status).toBe(200);
    try {
      for (let i = 0; i < 150 && !(slow.closed && idle.closed); i++) await new Promise((res) => setTimeout(res, 20));
      expect(slow.closed).toBe(true);
      expect(idle.closed).toBe(true);
    } finally {
      clearInterval(drip);
      slow.close();
      idle.close();
    }
  });
});
