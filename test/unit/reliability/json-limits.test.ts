import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DEFAULT_JSON_LIMITS, jsonLimitViolation, type JsonLimits } from '../../../src/server/json-limits.js';
import { parseBody } from '../../../src/server/request-body.js';
import { isKeyholdError } from '../../../src/framework/errors.js';

const L = DEFAULT_JSON_LIMITS;

function nested(depth: number): string {
  return '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
}

function entries(n: number): string {
  return '{' + Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',') + '}';
}

function elements(n: number): string {
  return '{"a":[' + Array.from({ length: n }, (_, i) => String(i)).join(',') + ']}';
}

describe('JSON body limits (Vault defaults: depth 500, strings 1 MiB, 10000 entries/elements)', () => {
  it('uses Vault default values', () => {
    expect(L).toEqual({ maxDepth: 500, maxStringLength: 1048576, maxObjectEntries: 10000, maxArrayElements: 10000 });
  });

  it('accepts nesting depth 500 and refuses 501', () => {
    expect(jsonLimitViolation(nested(500))).toBeNull();
    expect(jsonLimitViolation(nested(501))).toBe('JSON input exceeds allowed nesting depth');
  });

  it('accepts a 1 MiB string value and refuses one byte more, also for keys', () => {
    expect(jsonLimitViolation(`{"k":"${'a'.repeat(L.maxStringLength)}"}`)).toBeNull();
    expect(jsonLimitViolation(`{"k":"${'a'.repeat(L.maxStringLength + 1)}"}`)).toBe(
      'JSON string value exceeds allowed length',
    );
    expect(jsonLimitViolation(`{"${'a'.repeat(L.maxStringLength + 1)}":0}`)).toBe(
      'JSON string value exceeds allowed length',
    );
  });

  it('counts escapes as written (as Vault does), so a string of escaped quotes cannot hide its size', () => {
    const small: JsonLimits = { ...L, maxStringLength: 10 };
    expect(jsonLimitViolation(`{"k":"${'\\"'.repeat(6)}"}`, small)).toBe('JSON string value exceeds allowed length');
    expect(jsonLimitViolation(`{"k":"${'\\"'.repeat(5)}"}`, small)).toBeNull();
  });

  it('refuses an overlong number literal', () => {
    expect(jsonLimitViolation(`{"k":${'1'.repeat(L.maxStringLength + 1)}}`)).toBe(
      'JSON number value exceeds allowed length',
    );
  });

  it('accepts 10000 object entries and refuses 10001', () => {
    expect(jsonLimitViolation(entries(10000))).toBeNull();
    expect(jsonLimitViolation(entries(10001))).toBe('JSON object exceeds allowed entry count');
  });

  it('accepts 10000 array elements and refuses 10001, at any depth', () => {
    expect(jsonLimitViolation(elements(10000))).toBeNull();
    expect(jsonLimitViolation(elements(10001))).toBe('JSON array exceeds allowed element count');
    expect(jsonLimitViolation(`{"x":{"y":[{"z":${elements(10001)}}]}}`)).toBe(
      'JSON array exceeds allowed element count',
    );
  });

  it('does not count brackets, commas or colons inside strings', () => {
    const tiny: JsonLimits = { maxDepth: 2, maxStringLength: 100, maxObjectEntries: 2, maxArrayElements: 2 };
    expect(jsonLimitViolation('{"a":"[[[[,,,,{{{{:::","b":["x,y","]]]"]}', tiny)).toBeNull();
  });

  it('agrees with an independent recursive measurement on random JSON (fast-check)', () => {
    const tiny: JsonLimits = { maxDepth: 4, maxStringLength: 12, maxObjectEntries: 4, maxArrayElements: 4 };
    function breaks(v: unknown, depth: number): boolean {
      if (typeof v === 'string') return JSON.stringify(v).length - 2 > tiny.maxStringLength;
      if (typeof v === 'number') return JSON.stringify(v).length > tiny.maxStringLength;
      if (v === null || typeof v !== 'object') return false;
      if (depth + 1 > tiny.maxDepth) return true;
      if (Array.isArray(v)) return v.length > tiny.maxArrayElements || v.some((x) => breaks(x, depth + 1));
      const keys = Object.keys(v);
      return (
        keys.length > tiny.maxObjectEntries ||
        keys.some(
          (k) =>
            JSON.stringify(k).length - 2 > tiny.maxStringLength || breaks((v as Record<string, unknown>)[k], depth + 1),
        )
      );
    }
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
    console.log(`json-limits property seed=${seed}`);
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.boolean(), (v, pretty) => {
        const text = JSON.stringify(v, null, pretty ? 2 : undefined);
        expect(jsonLimitViolation(text, tiny) !== null).toBe(breaks(v, 0));
      }),
      { seed, numRuns: 2000 },
    );
  });

  it("parseBody answers a body over a limit with 400 and Vault's message", () => {
    const err = (() => {
      try {
        parseBody(Buffer.from(nested(600)), 'application/json');
      } catch (e) {
        return e;
      }
    })();
    expect(isKeyholdError(err) && err.status).toBe(400);
    expect((err as Error).message).toBe('JSON input exceeds allowed nesting depth');
  });

  it('scans a 32 MiB hostile body without building it (linear, bounded)', () => {
    const text = '['.repeat(32 * 1024 * 1024);
    expect(jsonLimitViolation(text)).toBe('JSON input exceeds allowed nesting depth');
    const wide = '[' + '0,'.repeat(16 * 1024 * 1024);
    expect(jsonLimitViolation(wide)).toBe('JSON array exceeds allowed element count');
  });
});
