/** Shared helpers of the transit-keys tests: in-memory storage, a settable clock, a silent logger, x509 in tests. */
import { InmemBackend } from '../../../src/storage/inmem.js';
import type { Storage } from '../../../src/storage/backend.js';
import type { Clock, Logger } from '../../../src/framework/context.js';

/** Plain in-memory storage (no barrier). */
export function memStorage(): Storage & { backend: InmemBackend } {
  const backend = new InmemBackend();
  return {
    backend,
    get: (k) => backend.get(k),
    put: (k, v) => backend.put(k, v),
    delete: (k) => backend.delete(k),
    list: (p) => backend.list(p),
  };
}

/** A clock tests move by hand (milliseconds). */
export function manualClock(start = Date.UTC(2025, 0, 2, 3, 4, 5)): Clock & { ms: number; advance(ms: number): void } {
  const c = { ms: start, now: () => c.ms, advance: (ms: number) => (c.ms += ms) };
  return c;
}

/** A logger that records messages (never prints). */
export function quietLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const rec = (lvl: string) => (msg: string, f?: Record<string, unknown>) =>
    void lines.push(`${lvl} ${msg} ${f ? JSON.stringify(f) : ''}`);
  return { lines, debug: rec('debug'), info: rec('info'), warn: rec('warn'), error: rec('error') };
}

/**
 * @peculiar/x509 needs a Reflect metadata polyfill (tsyringe); keyhold itself does not use the library,
 * so the tests provide a minimal one and load it lazily as an independent X.509/PKCS#10 implementation.
 */
export async function loadX509(): Promise<typeof import('@peculiar/x509')> {
  const meta = new WeakMap<object, Map<string, unknown>>();
  const R = Reflect as unknown as Record<string, unknown>;
  if (!R.getMetadata) {
    const own = (k: string, t: object, p?: string | symbol) => meta.get(t)?.get(`${String(p)}|${k}`);
    R.defineMetadata = (k: string, v: unknown, t: object, p?: string | symbol) => {
      let m = meta.get(t);
      if (!m) meta.set(t, (m = new Map()));
      m.set(`${String(p)}|${k}`, v);
    };
    R.getOwnMetadata = own;
    R.getMetadata = (k: string, t: object, p?: string | symbol) => {
      for (let o: object | null = t; o; o = Object.getPrototypeOf(o)) {
        const v = own(k, o, p);
        if (v !== undefined) return v;
      }
      return undefined;
    };
    R.hasMetadata = (k: string, t: object, p?: string | symbol) =>
      (R.getMetadata as (k: string, t: object, p?: string | symbol) => unknown)(k, t, p) !== undefined;
    R.metadata = (k: string, v: unknown) => (t: object, p?: string | symbol) =>
      (R.defineMetadata as (k: string, v: unknown, t: object, p?: string | symbol) => void)(k, v, t, p);
  }
  const x509 = await import('@peculiar/x509');
  const { webcrypto } = await import('node:crypto');
  x509.cryptoProvider.set(webcrypto as unknown as Crypto);
  return x509;
}
