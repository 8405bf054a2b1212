import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { parseBody } from '../../../src/server/request-body.js';
import { tokenFrom } from '../../../src/server/request-head.js';
import { normalizeMountPath } from '../../../src/server/core/mount-paths.js';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('request parsing', () => {
  it('parses JSON objects and treats an empty body or null as no data', () => {
    expect(parseBody(Buffer.from('{"a":1,"b":"x"}'), 'application/json')).toEqual({ a: 1, b: 'x' });
    expect(parseBody(Buffer.alloc(0), undefined)).toEqual({});
    expect(parseBody(Buffer.from('null'), 'application/json')).toEqual({});
    expect(parseBody(Buffer.from('  \n'), 'application/json')).toEqual({});
  });

  it('answers malformed JSON with a 400 "error parsing JSON"', () => {
    for (const bad of ['{"a":', '{a:1}', '[1,2]', '"str"', '12']) {
      try {
        parseBody(Buffer.from(bad), 'application/json');
        throw new Error('no throw for ' + bad);
      } catch (e) {
        expect((e as { status: number }).status).toBe(400);
        expect((e as Error).message).toMatch(/^error parsing JSON/);
      }
    }
  });

  it('parses form bodies by content type or by their shape', () => {
    expect(parseBody(Buffer.from('a=1&b=two+words&c=%2F'), 'application/x-www-form-urlencoded')).toEqual({
      a: '1',
      b: 'two words',
      c: '/',
    });
    expect(parseBody(Buffer.from('plaintext=aGk%3D'), undefined)).toEqual({ plaintext: 'aGk=' });
    // A JSON-looking body is JSON whatever the content type says (Vault sniffs).
    expect(parseBody(Buffer.from('{"a":1}'), 'application/x-www-form-urlencoded')).toEqual({ a: 1 });
  });

  it('keeps a "__proto__" key as data and never changes prototypes', () => {
    const out = parseBody(Buffer.from('{"__proto__":{"polluted":true}}'), 'application/json');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(out)).toEqual(['__proto__']);
  });

  it('takes the token from X-Vault-Token first, then Authorization: Bearer', () => {
    expect(tokenFrom(req({ 'x-vault-token': 'a', authorization: 'Bearer b' }))).toBe('a');
    expect(tokenFrom(req({ authorization: 'Bearer  b ' }))).toBe('b');
    expect(tokenFrom(req({ authorization: 'Basic Zm9v' }))).toBeUndefined();
    expect(tokenFrom(req({}))).toBeUndefined();
  });
});

describe('mount paths', () => {
  it('normalises to a trailing slash and rejects traversal and junk with 400 naming path', () => {
    expect(normalizeMountPath('/transit/')).toBe('transit/');
    expect(normalizeMountPath('team/a')).toBe('team/a/');
    for (const bad of ['', '/', '../x', 'a/../b', 'a b', 'a?b'])
      expect(() => normalizeMountPath(bad)).toThrow(/^path: /);
  });
});

describe('request targets', () => {
  it('serves an absolute-form target by its path and query, as Go net/http does for Vault', async () => {
    const { originForm } = await import('../../../src/server/request-head.js');
    expect(originForm('/v1/sys/health')).toBe('/v1/sys/health');
    expect(originForm('http://127.0.0.1:8200/v1/sys/health?standbyok=true')).toBe('/v1/sys/health?standbyok=true');
    expect(originForm('HTTPS://vault.example:443/v1/transit/keys')).toBe('/v1/transit/keys');
    expect(originForm('http://host')).toBe('/');
    expect(originForm('http://host?list=true')).toBe('/?list=true');
    // Only a scheme followed by "://" is an absolute form; anything else stays as sent (and 404s).
    expect(originForm('v1/sys/health')).toBe('v1/sys/health');
    expect(originForm('*')).toBe('*');
    expect(originForm('/v1/http://x/y')).toBe('/v1/http://x/y');
  });
});
