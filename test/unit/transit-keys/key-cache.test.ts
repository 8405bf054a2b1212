import { describe, expect, test } from 'vitest';
import { KeyCache } from '../../../src/engines/transit/keyring/key-cache.js';

describe('KeyCache', () => {
  test('keeps every entry when the size is 0 (unbounded)', () => {
    const c = new KeyCache<number>(0);
    for (let i = 0; i < 500; i++) c.set(`k${i}`, i);
    expect(c.count).toBe(500);
    expect(c.get('k0')).toBe(0);
  });

  test('evicts the least recently used entry when full', () => {
    const c = new KeyCache<number>(10);
    for (let i = 0; i < 10; i++) c.set(`k${i}`, i);
    c.get('k0'); // k0 becomes most recent; k1 is now the oldest
    c.set('k10', 10);
    expect(c.count).toBe(10);
    expect(c.has('k0')).toBe(true);
    expect(c.has('k1')).toBe(false);
    expect(c.has('k10')).toBe(true);
  });

  test('shrinks to a new size, dropping the oldest entries', () => {
    const c = new KeyCache<number>(0);
    for (let i = 0; i < 30; i++) c.set(`k${i}`, i);
    c.resize(10);
    expect(c.count).toBe(10);
    expect(c.has('k19')).toBe(false);
    expect(c.has('k20')).toBe(true);
    expect(c.size).toBe(10);
  });
});
