import { describe, expect, it } from 'vitest';
import { canonicalJson, entriesOf } from '../../../src/sync/values.js';

describe('pushed values', () => {
  it('secret-path pushes the whole secret as JSON with sorted keys (as Go encodes maps)', () => {
    const e = entriesOf({ key2: 'val2', key1: 'val1', nested: { b: 1, a: [true, null] } }, 'secret-path');
    expect([...e.keys()]).toEqual(['']);
    expect(e.get('')).toBe('{"key1":"val1","key2":"val2","nested":{"a":[true,null],"b":1}}');
    expect(JSON.parse(e.get('')!)).toEqual({ key2: 'val2', key1: 'val1', nested: { b: 1, a: [true, null] } });
  });

  it('secret-key pushes strings as they are and other values as JSON text', () => {
    const e = entriesOf({ s: 'plain "text"', n: 5, b: false, o: { z: 1, y: 2 }, l: ['a'] }, 'secret-key');
    expect(Object.fromEntries(e)).toEqual({ s: 'plain "text"', n: '5', b: 'false', o: '{"y":2,"z":1}', l: '["a"]' });
  });

  it('escapes like JSON.stringify for strings', () => {
    expect(canonicalJson({ 'k"': 'line\nbreak' })).toBe('{"k\\"":"line\\nbreak"}');
  });
});
