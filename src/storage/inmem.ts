/** In-memory backend (dev mode, tests). */
import type { Backend } from './backend.js';

/** Map-backed storage; values are copied so callers cannot alias stored buffers. */
export class InmemBackend implements Backend {
  private readonly map = new Map<string, Buffer>();
  async get(key: string): Promise<Buffer | null> {
    const v = this.map.get(key);
    return v ? Buffer.from(v) : null;
  }
  async put(key: string, value: Buffer): Promise<void> {
    this.map.set(key, Buffer.from(value));
  }
  async delete(key: string): Promise<void> {
    this.map.delete(key);
  }
  async list(prefix: string): Promise<string[]> {
    const out = new Set<string>();
    for (const k of this.map.keys()) {
      if (!k.startsWith(prefix)) continue;
      const rest = k.slice(prefix.length);
      const slash = rest.indexOf('/');
      out.add(slash === -1 ? rest : rest.slice(0, slash + 1));
    }
    return [...out].sort();
  }
  async close(): Promise<void> {}
  describe(): string {
    return 'inmem';
  }
}
