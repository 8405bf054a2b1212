/** What secret sync needs from KV v2, resolved at use time: user mounts load after the sync module. */
import type { EngineEnv, MountInfo } from '../framework/context.js';
import { internal } from '../framework/errors.js';

/** KV v2 reads of secret sync. */
export interface KvSource {
  /** A KV v2 mount by path or accessor. */
  mount(pathOrAccessor: string): MountInfo | undefined;
  /** Latest live version, or null when missing, deleted or destroyed. */
  readLatest(mount: MountInfo, path: string): Promise<{ data: Record<string, unknown>; version: number } | null>;
  /** Whether the secret has metadata (any version, even deleted). */
  exists(mount: MountInfo, path: string): Promise<boolean>;
}

/** What sync reads from a KV v2 engine instance (KvBackend, issue 5). */
export interface KvReadable {
  readLatest?(path: string): Promise<{ data: Record<string, unknown>; version: number } | null>;
  metadataOf?(path: string): Promise<unknown | null>;
}

/** KV access resolved at use time: the sync module is created before user mounts are loaded. */
export function kvSourceOf(env: EngineEnv): KvSource {
  const engine = (m: MountInfo): KvReadable => {
    const e = env.core.engineOf<KvReadable>(m.path);
    if (!e || typeof e.readLatest !== 'function')
      throw internal(`the engine at ${m.path} cannot be read by secret sync`);
    return e;
  };
  return {
    mount: (p) => env.core.findMount(p),
    readLatest: (m, path) => engine(m).readLatest!(path),
    exists: async (m, path) => {
      const e = engine(m);
      if (typeof e.metadataOf === 'function') return (await e.metadataOf(path)) != null;
      return (await e.readLatest!(path)) !== null;
    },
  };
}
