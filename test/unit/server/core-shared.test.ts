// Two cores on one shared backend (what a PostgreSQL HA backend would give): writes on one daemon
// reach the other through Backend.watch and cache invalidation, with no engine changes.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../src/storage/backend.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import { Core } from '../../../src/server/core/core.js';
import { NoKeychain } from '../../../src/seal/keychain.js';

/** Views of one store; a write through one view is reported to the watchers of the others. */
function sharedStore(): () => Backend {
  const store = new InmemBackend();
  const views: Array<{ watchers: Set<(k: string) => void> }> = [];
  return () => {
    const me = { watchers: new Set<(k: string) => void>() };
    views.push(me);
    const tell = (k: string) => {
      for (const v of views) if (v !== me) for (const w of v.watchers) w(k);
    };
    return {
      get: (k) => store.get(k),
      put: async (k, v) => {
        await store.put(k, v);
        tell(k);
      },
      delete: async (k) => {
        await store.delete(k);
        tell(k);
      },
      list: (p) => store.list(p),
      close: async () => {},
      describe: () => 'shared',
      watch: (fn) => {
        me.watchers.add(fn);
        return () => me.watchers.delete(fn);
      },
    };
  };
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const settle = () => new Promise((r) => setTimeout(r, 20));

async function pair() {
  const view = sharedStore();
  const a = new Core({
    backend: view(),
    keychain: new NoKeychain(),
    logger: quiet,
    maxRequestSize: 1 << 20,
    version: 't',
  });
  const b = new Core({
    backend: view(),
    keychain: new NoKeychain(),
    logger: quiet,
    maxRequestSize: 1 << 20,
    version: 't',
  });
  const init = await a.init({ useKeychain: false });
  await b.start();
  await b.submitUnsealKey(init.keys[0]!.toString('base64'));
  return { a, b, root: init.rootToken };
}

describe('shared storage (HA shape)', () => {
  it('shows a mount made on one daemon on the other, and drops it when unmounted', async () => {
    const { a, b } = await pair();
    await a.mount('shared-transit', 'transit');
    await settle();
    expect(b.mounts().map((m) => m.path)).toContain('shared-transit/');
    expect(b.resolve('shared-transit/keys')?.mount.accessor).toBe(a.findMount('shared-transit')!.accessor);
    await a.tune('shared-transit', { description: 'tuned elsewhere' });
    await settle();
    expect(b.findMount('shared-transit')?.description).toBe('tuned elsewhere');
    await a.unmount('shared-transit');
    await settle();
    expect(b.mounts().map((m) => m.path)).not.toContain('shared-transit/');
  });

  it('applies a policy changed on one daemon to tokens checked on the other', async () => {
    const { a, b } = await pair();
    await a.policies.put('p', 'path "sys/mounts" { capabilities = ["read"] }');
    const { id } = await a.tokens.create({ policies: ['p'] });
    const onB = (await b.lookupToken(id))!;
    expect(b.authorizer.allowed(onB, 'read', 'sys/mounts')).toBe(true);
    await a.policies.put('p', 'path "sys/mounts" { capabilities = ["deny"] }');
    await settle();
    expect(b.authorizer.allowed((await b.lookupToken(id))!, 'read', 'sys/mounts')).toBe(false);
  });

  it('refuses on one daemon a token revoked on the other, even when it was cached', async () => {
    const { a, b } = await pair();
    const { id, entry } = await a.tokens.create({ policies: ['default'] });
    expect(await b.lookupToken(id)).not.toBeNull();
    await a.tokens.revokeEntry(entry);
    await settle();
    expect(await b.lookupToken(id)).toBeNull();
  });

  it('hands engine records to the owning engine relative to its mount', async () => {
    const { a, b } = await pair();
    const m = await a.mount('eng', 'transit');
    await settle();
    const inst = b.engineOf<{ invalidate?: (k: string) => void }>('eng')!;
    const seen: string[] = [];
    inst.invalidate = (k) => void seen.push(k);
    await b.invalidate(`logical/${m.uuid}/policy/k1`);
    expect(seen).toEqual(['policy/k1']);
  });

  it('stops listening when sealed', async () => {
    const { a, b } = await pair();
    await b.seal();
    await a.mount('after-seal', 'transit');
    await settle();
    expect(b.isSealed()).toBe(true);
    expect(b.mounts()).toEqual([]);
  });
});
