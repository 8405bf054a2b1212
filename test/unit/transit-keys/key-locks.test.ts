import { describe, expect, test } from 'vitest';
import { KeyLocks } from '../../../src/engines/transit/keyring/key-locks.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyLocks', () => {
  test('lets shared holders of one key run together', async () => {
    const locks = new KeyLocks();
    let inside = 0;
    let peak = 0;
    const reader = () =>
      locks.with('k', 'shared', async () => {
        inside++;
        peak = Math.max(peak, inside);
        await tick();
        inside--;
      });
    await Promise.all([reader(), reader(), reader()]);
    expect(peak).toBe(3);
    expect(locks.size).toBe(0);
  });

  test('runs an exclusive holder alone and in arrival order with readers', async () => {
    const locks = new KeyLocks();
    const log: string[] = [];
    const job = (mode: 'shared' | 'exclusive', id: string) =>
      locks.with('k', mode, async () => {
        log.push(`start ${id}`);
        await tick();
        log.push(`end ${id}`);
      });
    await Promise.all([job('shared', 'r1'), job('exclusive', 'w'), job('shared', 'r2')]);
    // The writer waits for r1; r2 (arriving after the writer) waits for the writer: no starvation.
    expect(log).toEqual(['start r1', 'end r1', 'start w', 'end w', 'start r2', 'end r2']);
  });

  test('does not block other keys and releases the lock when the function throws', async () => {
    const locks = new KeyLocks();
    const order: string[] = [];
    const slow = locks.with('a', 'exclusive', async () => {
      await tick();
      await tick();
      order.push('a');
    });
    await locks.with('b', 'exclusive', async () => void order.push('b'));
    await slow;
    expect(order).toEqual(['b', 'a']);
    await expect(locks.with('a', 'exclusive', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await locks.with('a', 'exclusive', async () => void order.push('again'));
    expect(order).toContain('again');
    expect(locks.size).toBe(0);
  });

  test('keeps idle entries for reuse (no table churn per request), but only up to a bound', async () => {
    const locks = new KeyLocks();
    await locks.with('k', 'shared', async () => {});
    expect(locks.size).toBe(0); // nothing held...
    expect(locks.tracked).toBe(1); // ...but the entry stays for the next request
    await locks.with('k', 'exclusive', async () => {});
    expect(locks.tracked).toBe(1);
    for (let i = 0; i < 3000; i++) await locks.with(`key-${i}`, i % 2 ? 'shared' : 'exclusive', async () => {});
    expect(locks.tracked).toBeLessThanOrEqual(1025);
    expect(locks.size).toBe(0);
    // A held lock is never pruned: its holder still excludes a writer.
    let release!: () => void;
    const held = locks.with('held', 'shared', () => new Promise<void>((r) => (release = r)));
    for (let i = 0; i < 2000; i++) await locks.with(`more-${i}`, 'shared', async () => {});
    let writerRan = false;
    const writer = locks.with('held', 'exclusive', async () => {
      writerRan = true;
    });
    await tick();
    expect(writerRan).toBe(false);
    release();
    await Promise.all([held, writer]);
    expect(writerRan).toBe(true);
  });
});
