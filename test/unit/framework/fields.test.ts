import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  coerceFields,
  decodeBase64,
  f,
  formatDuration,
  parseBool,
  parseDuration,
  parseInt64,
} from '../../../src/framework/fields.js';
import type { KeyholdError } from '../../../src/framework/errors.js';

function errorOf(fn: () => unknown): KeyholdError {
  try {
    fn();
  } catch (e) {
    return e as KeyholdError;
  }
  throw new Error('expected a throw');
}

describe('field coercion (Vault-lenient)', () => {
  it('accepts Go strconv.ParseBool spellings and rejects others naming the field', () => {
    for (const t of ['1', 't', 'T', 'true', 'TRUE', 'True', true, 1]) expect(parseBool('b', t)).toBe(true);
    for (const v of ['0', 'f', 'F', 'false', 'FALSE', 'False', false, 0]) expect(parseBool('b', v)).toBe(false);
    const e = errorOf(() => parseBool('exportable', 'yes'));
    expect(e.kind).toBe('invalid');
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/^exportable: /);
  });

  it('accepts integers as numbers or numeric strings, rejects fractions and words', () => {
    expect(parseInt64('n', 5)).toBe(5);
    expect(parseInt64('n', '5')).toBe(5);
    expect(parseInt64('n', ' -12 ')).toBe(-12);
    expect(() => parseInt64('key_version', 1.5)).toThrow(/^key_version: expected an integer/);
    expect(() => parseInt64('key_version', 'five')).toThrow(/key_version/);
    expect(() => parseInt64('key_version', '1e3')).toThrow(/key_version/);
  });

  it('parses durations as seconds from numbers, digit strings and unit strings', () => {
    expect(parseDuration('ttl', 3600)).toBe(3600);
    expect(parseDuration('ttl', '3600')).toBe(3600);
    expect(parseDuration('ttl', '1h')).toBe(3600);
    expect(parseDuration('ttl', '90m')).toBe(5400);
    expect(parseDuration('ttl', '1h30m')).toBe(5400);
    expect(parseDuration('ttl', '7d')).toBe(604800);
    expect(parseDuration('ttl', '1500ms')).toBe(1);
    expect(parseDuration('ttl', '')).toBe(0);
    expect(() => parseDuration('ttl', '1x')).toThrow(/^ttl: expected a duration/);
    expect(() => parseDuration('ttl', 'h')).toThrow(/ttl/);
    expect(() => parseDuration('ttl', -5)).toThrow(/ttl/);
  });

  it('formats durations like Go time.Duration', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(3600)).toBe('1h0m0s');
    expect(formatDuration(90)).toBe('1m30s');
    expect(formatDuration(5)).toBe('5s');
  });

  it('round-trips any whole number of seconds through formatDuration and parseDuration', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 10 ** 9 }), (n) => parseDuration('d', formatDuration(n)) === n));
  });

  it('decodes standard and URL-safe base64 and rejects junk naming the field', () => {
    expect(decodeBase64('p', 'aGVsbG8=').toString()).toBe('hello');
    expect(decodeBase64('p', 'aGVsbG8').toString()).toBe('hello');
    expect(decodeBase64('p', '-_8=')).toEqual(Buffer.from([0xfb, 0xff]));
    expect(() => decodeBase64('plaintext', 'not base64!')).toThrow(/^plaintext: must be valid base64/);
    expect(() => decodeBase64('plaintext', 'a')).toThrow(/plaintext/);
  });

  it('matches node base64 decoding for any bytes (cross-check)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const b = Buffer.from(bytes);
        return (
          decodeBase64('x', b.toString('base64')).equals(b) && decodeBase64('x', b.toString('base64url')).equals(b)
        );
      }),
    );
  });

  it('applies defaults, required, choices and bounds with messages naming the field', () => {
    const fields = {
      name: f.string('n').required(),
      bytes: f.int('b').default(32).min(1).max(1024),
      format: f.string('f').default('base64').oneOf('base64', 'hex'),
      tags: f.strings('t'),
      ok: f.bool('o'),
    };
    const { data, unknown } = coerceFields(fields, { name: 'k', tags: 'a, b', ok: 'true', extra: 1 });
    expect(data).toEqual({ name: 'k', bytes: 32, format: 'base64', tags: ['a', 'b'], ok: true });
    expect(unknown).toEqual(['extra']);
    expect(() => coerceFields(fields, {})).toThrow(/^name: is required$/);
    expect(() => coerceFields(fields, { name: 'k', bytes: '0' })).toThrow(/^bytes: must be at least 1, got 0$/);
    expect(() => coerceFields(fields, { name: 'k', bytes: 2048 })).toThrow(/^bytes: must be at most 1024/);
    expect(() => coerceFields(fields, { name: 'k', format: 'raw' })).toThrow(/^format: must be one of base64, hex/);
  });

  it('does not let a copied default be mutated by a handler', () => {
    const fields = { list: f.strings('l').default(['a']) };
    const first = coerceFields(fields, {}).data.list;
    first.push('b');
    expect(coerceFields(fields, {}).data.list).toEqual(['a']);
  });

  it('reports inherited names such as constructor as unknown fields and never reads them from the prototype', () => {
    const fields = { toString: f.string('odd but declared') };
    const { data, unknown } = coerceFields(fields, JSON.parse('{"constructor": 1, "__proto__": {"x": 1}}'));
    expect(data.toString).toBeUndefined();
    expect(unknown.sort()).toEqual(['__proto__', 'constructor']);
  });

  it('coerces maps, string maps, lists and ints from JSON strings and values', () => {
    const fields = { m: f.map('m'), s: f.stringMap('s'), l: f.list('l'), i: f.ints('i') };
    const { data } = coerceFields(fields, { m: '{"a":1}', s: { a: 1, b: true }, l: '[1,2]', i: '1,2,3' });
    expect(data).toEqual({ m: { a: 1 }, s: { a: '1', b: 'true' }, l: [1, 2], i: [1, 2, 3] });
    expect(() => coerceFields(fields, { s: { a: { nested: 1 } } })).toThrow(/^s\.a: expected a string/);
    expect(() => coerceFields(fields, { l: 'nope' })).toThrow(/^l: expected a list/);
    expect(() => coerceFields(fields, { i: [1, 'x'] })).toThrow(/^i\[1\]: expected an integer/);
  });

  it('never echoes a long value in full in an error message', () => {
    const long = 'x'.repeat(500);
    const e = errorOf(() => parseBool('b', long));
    expect(e.message.length).toBeLessThan(100);
  });
});
