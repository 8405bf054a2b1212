import { describe, expect, it } from 'vitest';
import { Lru } from '../../../src/storage/lru.js';

describe('Lru', () => {
  it('evicts the least recently used entry when the count limit is passed', () => {
    const c = new Lru<string, number>({ maxEntries: 3 });
    c.set('a', 1).set('b', 2).set('c', 3);
    expect(c.get('a')).toBe(1); // a is now the most recent; b is the oldest
    c.set('d', 4);
    expect(c.has('b')).toBe(false);
    expect([...c.keys()]).toEqual(['d', 'a', 'c']);
    expect(c.size).toBe(3);
  });

  it('peek does not change the order; set of an existing key refreshes it', () => {
    const c = new Lru<string, number>({ maxEntries: 2 });
    c.set('a', 1).set('b', 2);
    expect(c.peek('a')).toBe(1);
    c.set('c', 3); // a was oldest despite the peek
    expect([...c.keys()]).toEqual(['c', 'b']);
    c.set('b', 20);
    c.set('d', 4);
    expect([...c.keys()]).toEqual(['d', 'b']);
    expect(c.get('b')).toBe(20);
  });

  it('keeps the total weight under maxWeight and tracks replacements and deletes', () => {
    const c = new Lru<string, Buffer>({ maxWeight: 100, weigh: (k, v) => k.length + v.length });
    c.set('k1', Buffer.alloc(40)).set('k2', Buffer.alloc(40));
    expect(c.weight).toBe(84);
    c.set('k1', Buffer.alloc(10)); // replace: weight follows the new value
    expect(c.weight).toBe(54);
    c.set('k3', Buffer.alloc(50)); // 54 + 52 > 100: the oldest (k2) goes
    expect([...c.keys()]).toEqual(['k3', 'k1']);
    expect(c.weight).toBe(64);
    expect(c.delete('k1')).toBe(true);
    expect(c.delete('k1')).toBe(false);
    expect(c.weight).toBe(52);
    c.set('big', Buffer.alloc(200)); // heavier than the limit alone: nothing can stay
    expect(c.size).toBe(0);
    expect(c.weight).toBe(0);
  });

  it('stays consistent through many mixed operations (checked against a reference model)', () => {
    const c = new Lru<number, number>({ maxEntries: 50 });
    const model: number[] = []; // most recent first
    let seed = 7;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    for (let i = 0; i < 20_000; i++) {
      const k = rnd(120);
      const op = rnd(3);
      if (op === 0) {
        c.set(k, i);
        const at = model.indexOf(k);
        if (at >= 0) model.splice(at, 1);
        model.unshift(k);
        if (model.length > 50) model.pop();
      } else if (op === 1) {
        const at = model.indexOf(k);
        expect(c.get(k) !== undefined).toBe(at >= 0);
        if (at >= 0) model.unshift(...model.splice(at, 1));
      } else {
        const at = model.indexOf(k);
        expect(c.delete(k)).toBe(at >= 0);
        if (at >= 0) model.splice(at, 1);
      }
    }
    expect([...c.keys()]).toEqual(model);
    c.resize(10);
    expect([...c.keys()]).toEqual(model.slice(0, 10));
    c.clear();
    expect(c.size).toBe(0);
  });
});
