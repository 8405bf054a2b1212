import { describe, expect, it } from 'vitest';
import { mergePatch, subkeysOf } from '../../../src/engines/kv/merge-patch.js';

// RFC 7386 appendix A: every example of the specification (independent known answers).
const RFC7386: [unknown, unknown, unknown][] = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [
    ['a', 'b'],
    ['c', 'd'],
    ['c', 'd'],
  ],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

describe('mergePatch', () => {
  it.each(RFC7386.map((c, i) => [i + 1, ...c]))(
    'matches RFC 7386 appendix A example %i',
    (_n, target, patch, expected) => {
      expect(mergePatch(target, patch)).toEqual(expected);
    },
  );

  it('does not modify the target', () => {
    const target = { a: { b: 1 } };
    mergePatch(target, { a: { b: 2 } });
    expect(target).toEqual({ a: { b: 1 } });
  });

  it('keeps a "__proto__" member as data instead of changing the prototype', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}}');
    const out = mergePatch({}, patch) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(out)).toEqual(['__proto__']);
  });
});

describe('subkeysOf', () => {
  const data = { a: 'x', b: { c: 1, d: { e: [1, 2] } }, f: {} };

  it('replaces every leaf with null and keeps nesting', () => {
    expect(subkeysOf(data, 0)).toEqual({ a: null, b: { c: null, d: { e: null } }, f: null });
  });

  it('stops at depth 1 with only the top-level keys', () => {
    expect(subkeysOf(data, 1)).toEqual({ a: null, b: null, f: null });
  });

  it('shows two levels at depth 2', () => {
    expect(subkeysOf(data, 2)).toEqual({ a: null, b: { c: null, d: null }, f: null });
  });
});
