import { describe, expect, it } from 'vitest';
import { sendReply, type ResponseSink } from '../../../src/server/respond.js';

function capture(): ResponseSink & { status: number; headers: Record<string, string | number>; body: string } {
  return {
    takesParts: false,
    headersSent: false,
    status: 0,
    headers: {},
    body: '',
    writeHead(status, headers) {
      this.status = status;
      this.headers = headers ?? {};
    },
    end(body) {
      if (Array.isArray(body) && !this.takesParts) throw new Error('pieces given to a sink that does not take them');
      this.body = Array.isArray(body)
        ? Buffer.concat(body).toString('utf8')
        : Buffer.isBuffer(body)
          ? body.toString('utf8')
          : String(body);
    },
    destroy() {},
  };
}

/** What the answer must equal: Vault's envelope, with data's members first when copied to the top level. */
function expected(data: unknown, inject: boolean, warnings: string[] | null = null) {
  const envelope = {
    request_id: 'r-1',
    lease_id: '',
    renewable: false,
    lease_duration: 0,
    data: data ?? null,
    wrap_info: null,
    warnings,
    auth: null,
    mount_type: 'system',
  };
  return inject && data && typeof data === 'object' ? { ...(data as object), ...envelope } : envelope;
}

describe('sendReply: the envelope written around data', () => {
  it.each([
    ['an object', { keys: ['a', 'b'], n: 1 }],
    ['an empty object', {}],
    ['null data', null],
    ['no data', undefined],
    ['Go-escaped characters', { html: '<a href="x">&</a>', sep: '\u2028' }],
    ['a member named like the envelope (the envelope wins)', { data: 'mine', request_id: 'mine', other: 2 }],
    ['an array', [1, 2]],
  ])('%s: same members, order and bytes as serialising the whole envelope', (_what, data) => {
    for (const inject of [false, true]) {
      const res = capture();
      sendReply(
        res,
        'r-1',
        { data: data as Record<string, unknown> | undefined, warnings: ['w'] },
        'system',
        200,
        inject,
      );
      const want = expected(data, inject, ['w']);
      expect(res.body.endsWith('\n')).toBe(true);
      expect(JSON.parse(res.body)).toEqual(want);
      // Key order as in {...data, ...envelope}, and Go's escaping of <, > and &.
      expect(Object.keys(JSON.parse(res.body))).toEqual(Object.keys(want));
      expect(res.body).not.toMatch(/[<>&\u2028]/);
      expect(res.headers['Content-Length']).toBe(Buffer.byteLength(res.body));
    }
  });

  it.each([
    ['an object', { keys: ['a', 'b'], n: 1, é: 'ü' }],
    ['an empty object', {}],
    ['a member named like the envelope', { data: 'mine', other: 2 }],
  ])('%s kept serialized by the handler (text or bytes): the same body as serialising data', (_what, data) => {
    const go = JSON.stringify(data).replace(
      /[<>&\u2028\u2029]/g,
      (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
    );
    for (const inject of [false, true]) {
      const plain = capture();
      sendReply(plain, 'r-1', { data }, 'system', 200, inject);
      const bytes = Buffer.from(go, 'utf8');
      const pieces = [bytes.subarray(0, 3), bytes.subarray(3, 3), bytes.subarray(3)];
      for (const dataJson of [go, bytes, pieces]) {
        for (const takesParts of [false, true]) {
          const res = { ...capture(), takesParts };
          sendReply(res, 'r-1', { data, dataJson }, 'system', 200, inject);
          expect(res.body).toBe(plain.body);
          expect(res.headers['Content-Length']).toBe(Buffer.byteLength(res.body));
        }
      }
    }
  });
});
