/** A KV engine environment for unit tests: in-memory storage, a settable clock, recorded events. */
import type { EngineEnv, KvEvent, MountInfo } from '../../../src/framework/context.js';
import { LocalEventBus } from '../../../src/framework/events.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import { KvEngine } from '../../../src/engines/kv/index.js';

/** A test harness around one KvEngine. */
export interface KvHarness {
  kv: KvEngine;
  storage: InmemBackend;
  events: KvEvent[];
  clock: { ms: number; now(): number };
  mount: MountInfo;
}

/** A fresh backend on empty in-memory storage at mount "secret/" (accessor kv_0badc0de). */
export function makeKv(startMs = Date.UTC(2024, 0, 2, 3, 4, 5)): KvHarness {
  const storage = new InmemBackend();
  const events: KvEvent[] = [];
  const bus = new LocalEventBus();
  bus.on('kv', (e) => events.push(e));
  const clock = {
    ms: startMs,
    now() {
      return this.ms;
    },
  };
  const mount: MountInfo = {
    path: 'secret/',
    type: 'kv',
    accessor: 'kv_0badc0de',
    uuid: 'u',
    description: '',
    options: { version: '2' },
    config: {},
    local: false,
    seal_wrap: false,
    external_entropy_access: false,
  };
  const noop = () => undefined;
  const env: EngineEnv = {
    storage,
    mount,
    clock,
    logger: { debug: noop, info: noop, warn: noop, error: noop },
    events: bus,
    core: { findMount: () => undefined, engineOf: () => undefined, mounts: () => [] },
  };
  return { kv: new KvEngine(env), storage, events, clock, mount };
}

/** Every key in the in-memory storage. */
export async function allKeys(s: InmemBackend): Promise<string[]> {
  const out: string[] = [];
  const walk = async (p: string): Promise<void> => {
    for (const n of await s.list(p)) {
      if (n.endsWith('/')) await walk(p + n);
      else out.push(p + n);
    }
  };
  await walk('');
  return out;
}
