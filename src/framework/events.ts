/**
 * In-process event bus: KV change events (KV -> secret sync) and the core's lifecycle events
 * (audit devices load after unseal, a cluster node takes the HA lock before init...).
 */
import type { EventBus, KvEvent } from './context.js';

/** Moments of the core's life other parts hook into. */
export type LifecycleTopic = 'before-init' | 'after-unseal' | 'before-seal';

/** A lifecycle listener; the core waits for it before going on. */
export type LifecycleListener = () => Promise<void>;

/** The lifecycle half of the bus, as the core's collaborators and hosts (audit, cluster) see it. */
export interface LifecycleEvents {
  /** Listen to a lifecycle moment; listeners run in the order they subscribed. Returns the unsubscribe. */
  on(topic: LifecycleTopic, listener: LifecycleListener): () => void;
  /** Run every listener of `topic` one after another, each awaited; the first that fails stops the rest and rejects. */
  emitInOrder(topic: LifecycleTopic): Promise<void>;
}

/**
 * A tiny bus. KV events are synchronous and a failing listener is isolated (one subscriber cannot
 * break a write); lifecycle events are awaited in order and a failure reaches the emitter (a
 * cluster node refusing init, an audit device that cannot open).
 */
export class LocalEventBus implements EventBus, LifecycleEvents {
  private readonly listeners = new Set<(e: KvEvent) => void>();
  private readonly lifecycle = new Map<LifecycleTopic, Set<LifecycleListener>>();
  constructor(private readonly onError: (e: unknown) => void = () => {}) {}
  emit(_topic: 'kv', event: KvEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch (e) {
        this.onError(e);
      }
    }
  }
  on(topic: 'kv', listener: (event: KvEvent) => void): () => void;
  on(topic: LifecycleTopic, listener: LifecycleListener): () => void;
  on(topic: 'kv' | LifecycleTopic, listener: ((event: KvEvent) => void) | LifecycleListener): () => void {
    if (topic === 'kv') {
      const l = listener as (event: KvEvent) => void;
      this.listeners.add(l);
      return () => this.listeners.delete(l);
    }
    let set = this.lifecycle.get(topic);
    if (!set) this.lifecycle.set(topic, (set = new Set()));
    const l = listener as LifecycleListener;
    set.add(l);
    return () => set.delete(l);
  }
  async emitInOrder(topic: LifecycleTopic): Promise<void> {
    for (const l of this.lifecycle.get(topic) ?? []) await l();
  }
}
