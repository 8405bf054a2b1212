import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ListVerbRewriter } from '../../../src/server/list-verb.js';

type Req = { method: string; body: string; chunked: boolean };

function wire(r: Req, rewrite: boolean): string {
  const m = rewrite ? (r.method === 'LIST' ? 'LOCK' : r.method === 'LOCK' ? 'MOVE' : r.method) : r.method;
  if (r.chunked) {
    const half = Math.floor(r.body.length / 2);
    const parts = [r.body.slice(0, half), r.body.slice(half)].filter((p) => p.length > 0);
    const chunks = parts.map((p) => `${Buffer.byteLength(p).toString(16)};ext=1\r\n${p}\r\n`).join('');
    return `${m} /v1/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\nX-Trailer: 1\r\n\r\n`;
  }
  const len = Buffer.byteLength(r.body);
  return `${m} /v1/x HTTP/1.1\r\nHost: x\r\n${len ? `Content-Length: ${len}\r\n` : ''}\r\n${r.body}`;
}

function feed(input: Buffer, cuts: number[]): Buffer {
  const rw = new ListVerbRewriter();
  const out: Buffer[] = [];
  let prev = 0;
  for (const c of [...cuts.filter((x) => x > 0 && x < input.length)].sort((a, b) => a - b).concat(input.length)) {
    out.push(rw.push(input.subarray(prev, c)));
    prev = c;
  }
  return Buffer.concat(out);
}

describe('LIST verb rewriter', () => {
  it('rewrites LIST to LOCK and a real LOCK to MOVE at request starts only', () => {
    const input = Buffer.from(
      wire({ method: 'LIST', body: '', chunked: false }) + wire({ method: 'LOCK', body: '', chunked: false }),
    );
    expect(feed(input, []).toString()).toBe(
      wire({ method: 'LIST', body: '', chunked: false }, true) +
        wire({ method: 'LOCK', body: '', chunked: false }, true),
    );
    expect(feed(input, []).toString().startsWith('LOCK ')).toBe(true);
    expect(feed(input, []).toString()).toContain('MOVE /v1/x');
  });

  it('leaves "LIST " inside bodies alone (Content-Length and chunked)', () => {
    const reqs: Req[] = [
      { method: 'POST', body: 'LIST /v1/evil HTTP/1.1\r\n\r\n', chunked: false },
      { method: 'LIST', body: '', chunked: false },
      { method: 'POST', body: 'LIST LIST LIST', chunked: true },
      { method: 'LIST', body: '', chunked: false },
    ];
    const input = Buffer.from(reqs.map((r) => wire(r, false)).join(''));
    expect(feed(input, []).toString()).toBe(reqs.map((r) => wire(r, true)).join(''));
  });

  it('handles a request split byte by byte', () => {
    const reqs: Req[] = [
      { method: 'POST', body: '{"a":"LIST "}', chunked: false },
      { method: 'LIST', body: '', chunked: false },
      { method: 'PUT', body: 'LIST', chunked: true },
      { method: 'LIST', body: '', chunked: false },
    ];
    const input = Buffer.from(reqs.map((r) => wire(r, false)).join(''));
    const cuts = Array.from({ length: input.length }, (_, i) => i);
    expect(feed(input, cuts).toString()).toBe(reqs.map((r) => wire(r, true)).join(''));
  });

  it('rewrites exactly the request starts for any mix of requests and any packet split', () => {
    const req = fc.record({
      method: fc.constantFrom('LIST', 'GET', 'POST', 'PUT', 'DELETE', 'LOCK'),
      body: fc.oneof(
        fc.constant(''),
        fc.string({ maxLength: 40 }),
        fc.constantFrom('LIST ', '\r\n\r\nLIST /x HTTP/1.1\r\n\r\n', '0\r\n\r\n'),
      ),
      chunked: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(req, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(2000), { maxLength: 12 }),
        (reqs, cuts) => {
          const fixed = reqs;
          const input = Buffer.from(fixed.map((r) => wire(r, false)).join(''));
          return feed(input, cuts).equals(Buffer.from(fixed.map((r) => wire(r, true)).join('')));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never mutates the buffer it was given', () => {
    const rw = new ListVerbRewriter();
    const input = Buffer.from(wire({ method: 'LIST', body: '', chunked: false }));
    const copy = Buffer.from(input);
    rw.push(input);
    expect(input.equals(copy)).toBe(true);
  });

  it('finds the end of headers written with bare LF line endings', () => {
    const input = Buffer.from('POST /v1/x HTTP/1.1\nContent-Length: 5\n\nLIST LIST /v1/x HTTP/1.1\n\n');
    expect(feed(input, [3, 30, 45]).toString()).toBe(
      'POST /v1/x HTTP/1.1\nContent-Length: 5\n\nLIST LOCK /v1/x HTTP/1.1\n\n',
    );
  });

  it('passes through after an Upgrade request', () => {
    const rw = new ListVerbRewriter();
    rw.push(Buffer.from('GET /v1/x HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'));
    expect(rw.push(Buffer.from('LIST raw frame bytes')).toString()).toBe('LIST raw frame bytes');
  });
});
