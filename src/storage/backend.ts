/**
 * The storage backend contract. Backends see only ciphertext (the barrier sits above them) and
 * plaintext record paths.
 *
 * A shared backend (PostgreSQL with several daemons) adds `watch(onChange)`: keys changed by another
 * process (LISTEN/NOTIFY on each write). The core drops its caches for them (mount table, policies,
 * tokens) and hands engine keys to the engine's optional `invalidate(key)`; nothing else changes for
 * engines. Its HA lock is a contract of its own (HaBackend, storage/postgres-ha-lock.ts).
 * Single-process backends (file, inmem) implement neither.
 */
export interface Backend {
  /** Value at `key`, or null when absent. */
  get(key: string): Promise<Buffer | null>;
  /** Durably store `value` at `key` (durable when the promise resolves). */
  put(key: string, value: Buffer): Promise<void>;
  /** Remove `key`; absent keys are not an error. */
  delete(key: string): Promise<void>;
  /** Immediate children of `prefix` (which ends in "/" or is ""): leaf names, and folder names with a trailing "/". Sorted. */
  list(prefix: string): Promise<string[]>;
  /** Flush and release resources (locks, handles). */
  close(): Promise<void>;
  /** Optional: call `onChange(key)` when another process puts or deletes `key` (not for our own writes); returns an unsubscribe. */
  watch?(onChange: (key: string) => void): () => void;
  /** Human description for `status` ("file:/path", "inmem"). */
  describe(): string;
}

/** Plaintext storage as engines see it (after the barrier, scoped to a prefix). Same shape as Backend. */
export interface Storage {
  get(key: string): Promise<Buffer | null>;
  put(key: string, value: Buffer): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string): Promise<string[]>;
}

/** Read a JSON record, or null. */
export async function getJSON<T>(s: Storage, key: string): Promise<T | null> {
  const b = await s.get(key);
  return b ? (JSON.parse(b.toString('utf8')) as T) : null;
}

/** Write a JSON record. */
export async function putJSON(s: Storage, key: string, value: unknown): Promise<void> {
  await s.put(key, Buffer.from(JSON.stringify(value), 'utf8'));
}

/** A view of `inner` under `prefix` (e.g. "logical/<mount uuid>/"). */
export function prefixed(inner: Storage, prefix: string): Storage {
  return {
    get: (k) => inner.get(prefix + k),
    put: (k, v) => inner.put(prefix + k, v),
    delete: (k) => inner.delete(prefix + k),
    list: (p) => inner.list(prefix + p),
  };
}

/** Every key under `prefix`, recursively (walks folders). */
export async function listAll(s: Storage, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await s.list(prefix)) {
    if (name.endsWith('/')) out.push(...(await listAll(s, prefix + name)));
    else out.push(prefix + name);
  }
  return out;
}
