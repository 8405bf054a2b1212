/** What secret sync needs from KV v2 (resolved lazily: user mounts load after the sync module; see index.ts kvSourceOf). */
import type { MountInfo } from '../framework/context.js';

/** KV v2 reads of secret sync. */
export interface KvSource {
  /** A KV v2 mount by path or accessor. */
  mount(pathOrAccessor: string): MountInfo | undefined;
  /** Latest live version, or null when missing, deleted or destroyed. */
  readLatest(mount: MountInfo, path: string): Promise<{ data: Record<string, unknown>; version: number } | null>;
  /** Whether the secret has metadata (any version, even deleted). */
  exists(mount: MountInfo, path: string): Promise<boolean>;
}
