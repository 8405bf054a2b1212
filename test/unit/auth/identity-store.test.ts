/** The identity store: one entity per alias even under concurrent first logins; metadata refreshed; lookups. */
import { describe, expect, it } from 'vitest';
import { IdentityStore } from '../../../src/auth/identity.js';
import { InmemBackend } from '../../../src/storage/inmem.js';

const mount = { accessor: 'auth_jwt_12345678', path: 'auth/jwt/', type: 'jwt' };

describe('IdentityStore', () => {
  it('creates one entity for concurrent first logins of the same alias, and finds it by every key', async () => {
    const store = new IdentityStore(new InmemBackend(), { now: () => Date.now() });
    const all = await Promise.all(
      Array.from({ length: 20 }, () =>
        store.entityForLogin(mount, { name: 'octo-org/app', metadata: { ref: 'main' } }),
      ),
    );
    expect(new Set(all.map((e) => e.id)).size).toBe(1);
    const e = all[0]!;
    expect(e.name).toMatch(/^entity_[0-9a-f]{8}$/);
    expect((await store.byAlias(mount.accessor, 'octo-org/app'))?.id).toBe(e.id);
    expect((await store.byName(e.name))?.id).toBe(e.id);
    expect((await store.byAliasId(e.aliases[0]!.id))?.id).toBe(e.id);
    expect(await store.listIds()).toEqual([e.id]);
  });

  it('refreshes alias metadata from each login and exposes it to policy templating', async () => {
    const store = new IdentityStore(new InmemBackend(), { now: () => Date.now() });
    const a = await store.entityForLogin(mount, { name: 'svc', metadata: { repository: 'one' } });
    const b = await store.entityForLogin(mount, { name: 'svc', metadata: { repository: 'two' } });
    expect(b.id).toBe(a.id);
    const fresh = new IdentityStore((store as unknown as { storage: InmemBackend }).storage, { now: () => Date.now() });
    const view = await fresh.tokenIdentity(a.id);
    expect(view?.aliases[0]).toMatchObject({
      mountAccessor: mount.accessor,
      name: 'svc',
      metadata: { repository: 'two' },
    });
    expect(await fresh.tokenIdentity('00000000-0000-0000-0000-000000000000')).toBeNull();
  });
});
