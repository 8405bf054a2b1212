// Identity policies across two cores on one shared backend (the HA shape): a group or entity changed on
// one daemon changes what the entity's tokens may do on the other, on the hot path (cachedToken +
// authorizer) as well as the slow one, because the identity store drops its views on invalidation.
import { describe, expect, it } from 'vitest';
import { NoKeychain } from '../../../src/seal/keychain.js';
import { Core } from '../../../src/server/core/core.js';
import type { Backend } from '../../../src/storage/backend.js';
import { InmemBackend } from '../../../src/storage/inmem.js';

/** Views of one store; a write through one view is reported to the watchers of the others. */
function sharedStore(): () => Backend {
  const store = new InmemBackend();
  const views: Array<Set<(k: string) => void>> = [];
  return () => {
    const mine = new Set<(k: string) => void>();
    views.push(mine);
    const tell = (k: string) => {
      for (const v of views) if (v !== mine) for (const w of v) w(k);
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
        mine.add(fn);
        return () => mine.delete(fn);
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
  return { a, b };
}

/** What `b` answers for the token, through the slow path once and then the hot path. */
async function allowedOn(core: Core, id: string, path: string): Promise<[boolean, boolean]> {
  const slow = core.authorizer.allowed((await core.lookupToken(id))!, 'read', path);
  const cached = core.cachedToken(id);
  expect(cached, 'the hot path answers without storage after a lookup').toBeDefined();
  return [slow, core.authorizer.allowed(cached!, 'read', path)];
}

describe('identity policies on shared storage', () => {
  it('a group joined, changed or left on one daemon applies to the tokens checked on the other', async () => {
    const { a, b } = await pair();
    await a.policies.put('mounts-reader', 'path "sys/mounts" { capabilities = ["read"] }');
    const { entity } = await a.identity.upsertEntity({ name: 'alice' });
    const { id } = await a.tokens.create({ policies: ['default'], entity_id: entity.id });
    expect(await allowedOn(b, id, 'sys/mounts')).toEqual([false, false]);

    const { group } = await a.identity.upsertGroup(null, {
      name: 'ops',
      policies: ['mounts-reader'],
      member_entity_ids: [entity.id],
    });
    await settle();
    expect(await allowedOn(b, id, 'sys/mounts')).toEqual([true, true]);

    await a.identity.upsertGroup(group.id, { member_entity_ids: [] });
    await settle();
    expect(await allowedOn(b, id, 'sys/mounts')).toEqual([false, false]);

    await a.identity.upsertEntity({ id: entity.id, policies: ['mounts-reader'] });
    await settle();
    expect(await allowedOn(b, id, 'sys/mounts')).toEqual([true, true]);
    expect(b.cachedToken(id)?.identity?.policies).toEqual(['mounts-reader']);
  });

  it("refuses a disabled entity's token on both daemons, on the hot path too", async () => {
    const { a, b } = await pair();
    const { entity } = await a.identity.upsertEntity({ name: 'bob' });
    const { id } = await a.tokens.create({ policies: ['default'], entity_id: entity.id });
    expect(await b.lookupToken(id)).not.toBeNull();
    expect(b.cachedToken(id)).toBeDefined();
    await a.identity.upsertEntity({ id: entity.id, disabled: true });
    await settle();
    expect(b.cachedToken(id)).toBeUndefined();
    expect(await b.lookupToken(id)).toBeNull();
    expect(await a.lookupToken(id)).toBeNull();
  });
});
