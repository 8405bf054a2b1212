import { describe, expect, it } from 'vitest';
import { KeyedLock } from '../../../src/framework/keyed-lock.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedLock', () => {
  it('runs holders of one key one at a time, in arrival order', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const job = (name: string) =>
      lock.run('k', async () => {
        log.push(`start ${name}`);
        await tick();
        await tick();
        log.push(`end ${name}`);
      });
    await Promise.all([job('a'), job('b'), job('c')]);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(lock.size).toBe(0);
  });

  it('lets different keys run concurrently', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const job = (key: string) =>
      lock.run(key, async () => {
        log.push(`start ${key}`);
        await tick();
        log.push(`end ${key}`);
      });
    await Promise.all([job('x'), job('y')]);
    expect(log.slice(0, 2).sort()).toEqual(['start x', 'start y']);
  });

  it('releases the lock when the holder throws', async () => {
    const lock = new KeyedLock();
    await expect(lock.run('k', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(lock.run('k', async () => 42)).resolves.toBe(42);
    expect(lock.size).toBe(0);
  });
});
