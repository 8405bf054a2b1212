import { describe, expect, it } from 'vitest';
import {
  checkSecretPath,
  invalidPathWarning,
  parseCas,
  parseCustomMetadata,
} from '../../../src/engines/kv/kv-rules.js';

describe('parseCas', () => {
  it.each([
    [3, 3],
    ['7', 7],
    ['', 0],
    [null, 0],
    [true, 1],
    [2.9, 2],
  ])('decodes %j as %i like mapstructure.WeakDecode', (raw, want) => {
    expect(parseCas(raw)).toBe(want);
  });

  it.each([['abc'], [{}], [[1]]])('rejects %j with Vault\'s "error parsing check-and-set parameter"', (raw) => {
    expect(() => parseCas(raw)).toThrow('error parsing check-and-set parameter');
  });
});

describe('parseCustomMetadata', () => {
  it('turns scalars into strings', () => {
    expect(parseCustomMetadata({ a: 'x', n: 5, b: true }, false)).toEqual({ a: 'x', n: '5', b: '1' });
  });

  it('keeps nulls as deletions only for patch', () => {
    expect(parseCustomMetadata({ a: null }, true)).toEqual({ a: null });
    expect(() => parseCustomMetadata({ a: null }, false)).toThrow(/length of value for key "a" is 0/);
  });

  it('rejects more than 64 keys with the count', () => {
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    expect(() => parseCustomMetadata(many, false)).toThrow(
      'custom_metadata validation failed: payload must contain at most 64 keys, provided 65',
    );
  });

  it('reports every bad key and value in one go-multierror text', () => {
    let msg = '';
    try {
      parseCustomMetadata({ ['k'.repeat(129)]: 'v', ok: 'x'.repeat(513) }, false);
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg.startsWith('2 errors occurred:\n\t* ')).toBe(true);
    expect(msg).toContain('but must be 0 < len(key) <= 128');
    expect(msg).toContain('length of value for key "ok" is 513 but must be 0 < len(value) <= 512');
  });

  it('rejects unprintable characters', () => {
    expect(() => parseCustomMetadata({ a: 'x\u0007' }, false)).toThrow(
      /value for key "a" contains unprintable characters/,
    );
  });

  it('rejects object values naming the key', () => {
    expect(() => parseCustomMetadata({ a: { b: 1 } }, false)).toThrow(/value for key "a" must be a string/);
  });
});

describe('checkSecretPath', () => {
  it('accepts nested paths', () => {
    expect(() => checkSecretPath('a/b/c')).not.toThrow();
  });

  it.each([['a//b'], ['/a'], ['a/']])('rejects %j naming "path"', (p) => {
    expect(() => checkSecretPath(p)).toThrow(/^path: must not contain empty segments/);
  });

  it('rejects a segment longer than 160 bytes', () => {
    expect(() => checkSecretPath('a/' + 'x'.repeat(161))).toThrow('path: each segment must be at most 160 bytes');
  });
});

describe('invalidPathWarning', () => {
  it('names the vault kv verb', () => {
    expect(invalidPathWarning('put')).toBe(
      "Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv put' for this operation.",
    );
  });
});
