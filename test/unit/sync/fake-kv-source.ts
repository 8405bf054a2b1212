/**
 * A KV v2 mount and an in-memory KV source for the sync worker's unit tests (worker, resume): what
 * the worker reads of KV, without a KV engine. `silent` is a logger that drops everything.
 */
import type { MountInfo } from '../../../src/framework/context.js';
import type { KvSource } from '../../../src/sync/kv-source.js';

export const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** The mount every secret lives on (secret/, KV v2). */
export const mount: MountInfo = {
  path: 'secret/',
  type: 'kv',
  accessor: 'kv_0badf00d',
  uuid: 'u',
  description: '',
  options: { version: '2' },
  config: {},
  local: false,
  seal_wrap: false,
  external_entropy_access: false,
};

/** Secrets by path; each write makes a new version. */
export class FakeKv implements KvSource {
  readonly data = new Map<string, { data: Record<string, unknown>; version: number }>();
  write(path: string, data: Record<string, unknown>): void {
    this.data.set(path, { data, version: (this.data.get(path)?.version ?? 0) + 1 });
  }
  mount(p: string) {
    return p === mount.accessor || p.replace(/\/?$/, '/') === mount.path ? mount : undefined;
  }
  async readLatest(_m: MountInfo, path: string) {
    return this.data.get(path) ?? null;
  }
  async exists(_m: MountInfo, path: string) {
    return this.data.has(path);
  }
}
