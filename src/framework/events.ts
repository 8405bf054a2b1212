/** In-process event bus (KV change events -> secret sync). */
import type { EventBus, KvEvent } from './context.js';

/** A tiny synchronous bus; listener errors are isolated so one subscriber cannot break a write. */
export class LocalEventBus implements EventBus {
  private readonly listeners = new Set<(e: KvEvent) => void>();
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
  on(_topic: 'kv', listener: (event: KvEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
