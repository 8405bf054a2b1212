/**
 * The long poll of `MOUNT/events` (`wait`, what the agent's cache follows): a reader with a cursor
 * is answered as soon as a change happens, or empty after `wait`; index 0 with the log's epoch is a
 * cursor (a mount without changes yet); a stopping daemon answers every poll at once.
 */
import { describe, expect, it } from 'vitest';
import { LocalEventBus } from '../../../src/framework/events.js';
import { KvChangeLog, releaseLongPolls } from '../../../src/engines/kv/kv-changes.js';

const event = (path: string) => ({
  kind: 'data-write' as const,
  mountAccessor: 'kv_1',
  mountPath: 'secret/',
  path,
  version: 1,
  currentVersion: 1,
});

describe('KvChangeLog.wait', () => {
  const bus = new LocalEventBus();
  const log = new KvChangeLog(bus, 'kv_1');

  it('answers as soon as a change happens, with the change (index 0 + epoch is a cursor)', async () => {
    const { epoch, index } = log.since(0);
    expect(index).toBe(0);
    const t0 = Date.now();
    const waiting = log.wait(0, epoch, 5);
    setTimeout(() => bus.emit('kv', event('app')), 30);
    const r = await waiting;
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(r.events.map((e) => [e.index, e.path])).toEqual([[1, 'app']]);
    expect(r.truncated).toBe(false);
  });

  it('answers empty after the wait; without a cursor it does not wait', async () => {
    const { epoch, index } = log.since(0);
    const t0 = Date.now();
    const r = await log.wait(index, epoch, 0.2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    expect(r.events).toEqual([]);
    const t1 = Date.now();
    await log.wait(0, '', 5);
    expect(Date.now() - t1).toBeLessThan(100);
  });

  it('a stopping daemon answers every long poll at once, and later ones do not wait', async () => {
    const { epoch, index } = log.since(0);
    const t0 = Date.now();
    const waiting = log.wait(index, epoch, 30);
    setTimeout(releaseLongPolls, 20);
    await waiting;
    expect(Date.now() - t0).toBeLessThan(1000);
    const t1 = Date.now();
    await log.wait(index, epoch, 30);
    expect(Date.now() - t1).toBeLessThan(100);
  });
});
