// The event bus: KV events are synchronous with failing listeners isolated; lifecycle events are
// awaited one after another in subscription order, and a failure reaches the emitter.
import { describe, expect, it } from 'vitest';
import { LocalEventBus } from '../../../src/framework/events.js';
import type { KvEvent } from '../../../src/framework/context.js';

const kvEvent: KvEvent = {
  kind: 'data-write',
  mountAccessor: 'kv_1',
  mountPath: 'secret/',
  path: 'a',
  version: 1,
  currentVersion: 1,
};

describe('lifecycle events', () => {
  it('awaits each listener before starting the next, in subscription order', async () => {
    const bus = new LocalEventBus();
    const log: string[] = [];
    bus.on('after-unseal', async () => {
      log.push('first start');
      await new Promise((r) => setTimeout(r, 20));
      log.push('first end');
    });
    bus.on('after-unseal', async () => {
      log.push('second');
    });
    await bus.emitInOrder('after-unseal');
    expect(log).toEqual(['first start', 'first end', 'second']);
  });

  it('stops at the first failing listener and rejects with its error', async () => {
    const bus = new LocalEventBus();
    const ran: string[] = [];
    bus.on('before-init', async () => {
      throw new Error('another node holds the lock');
    });
    bus.on('before-init', async () => {
      ran.push('later');
    });
    await expect(bus.emitInOrder('before-init')).rejects.toThrow('another node holds the lock');
    expect(ran).toEqual([]);
  });

  it('keeps topics apart, forgets unsubscribed listeners and resolves with no listener', async () => {
    const bus = new LocalEventBus();
    const ran: string[] = [];
    const off = bus.on('before-seal', async () => {
      ran.push('seal');
    });
    bus.on('after-unseal', async () => {
      ran.push('unseal');
    });
    await bus.emitInOrder('before-seal');
    off();
    await bus.emitInOrder('before-seal');
    await bus.emitInOrder('before-init');
    expect(ran).toEqual(['seal']);
  });
});

describe('kv events', () => {
  it('delivers synchronously and isolates a failing listener', () => {
    const errors: unknown[] = [];
    const bus = new LocalEventBus((e) => errors.push(e));
    const seen: string[] = [];
    bus.on('kv', () => {
      throw new Error('broken subscriber');
    });
    bus.on('kv', (e) => seen.push(e.path));
    bus.emit('kv', kvEvent);
    expect(seen).toEqual(['a']);
    expect(errors).toHaveLength(1);
  });
});
