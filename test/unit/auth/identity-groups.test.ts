/**
 * Groups in the identity store: direct and inherited memberships, external groups filled by logins
 * through their alias, identity policies in the token view (and the view kept until a change), loops
 * refused, merges moving memberships, and a second store over the same storage seeing it all.
 */
import { describe, expect, it } from 'vitest';
import { IdentityStore } from '../../../src/auth/identity.js';
import { GroupGraph } from '../../../src/auth/identity/group-graph.js';
import type { GroupRecord } from '../../../src/auth/identity/records.js';
import { InmemBackend } from '../../../src/storage/inmem.js';

const jwt = { accessor: 'auth_jwt_12345678', path: 'auth/jwt/', type: 'jwt' };
const ldap = { accessor: 'auth_ldap_87654321', path: 'auth/ldap/', type: 'ldap' };
const mounts = (a: string) => [jwt, ldap].find((m) => m.accessor === a);
const clock = { now: () => Date.now() };

function fresh(storage = new InmemBackend()) {
  return { storage, store: new IdentityStore(storage, clock, mounts) };
}

describe('IdentityStore groups', () => {
  it('groupIdsOf answers direct and inherited groups; the token view carries their policies', async () => {
    const { store } = fresh();
    const { entity } = await store.upsertEntity({ name: 'alice', policies: ['own'] });
    const top = (await store.upsertGroup(null, { name: 'top', policies: ['top-p'] })).group;
    const mid = (await store.upsertGroup(null, { name: 'mid', policies: ['mid-p'], member_entity_ids: [entity.id] }))
      .group;
    await store.upsertGroup(top.id, { member_group_ids: [mid.id] });
    await store.upsertGroup(null, { name: 'unrelated', policies: ['nope'] });
    expect(await store.groupIdsOf(entity.id)).toEqual([top.id, mid.id].sort());
    expect(await store.groupsOf(entity.id)).toEqual({ direct: [mid.id], inherited: [top.id] });
    const view = await store.tokenIdentity(entity.id);
    expect(view?.policies).toEqual(['mid-p', 'own', 'top-p']);
    expect(new Set(view?.groupNames)).toEqual(new Set(['mid', 'top']));
  });

  it('keeps one view object per entity until something changes (the ACL cache keys on it)', async () => {
    const { store } = fresh();
    const { entity } = await store.upsertEntity({ name: 'bob' });
    const v1 = await store.tokenIdentity(entity.id);
    expect(store.cachedTokenIdentity(entity.id)).toBe(v1);
    expect(await store.tokenIdentity(entity.id)).toBe(v1);
    await store.upsertGroup(null, { name: 'g', policies: ['gp'], member_entity_ids: [entity.id] });
    const v2 = store.cachedTokenIdentity(entity.id);
    expect(v2).not.toBe(v1);
    expect(v2?.policies).toEqual(['gp']);
  });

  it('a login reporting group names joins the external groups aliased on that mount, and leaves them', async () => {
    const { store, storage } = fresh();
    const dev = (await store.upsertGroup(null, { name: 'dev', type: 'external', policies: ['dev-p'] })).group;
    await store.upsertGroupAlias({ name: 'developers', mount_accessor: jwt.accessor, canonical_id: dev.id });
    // Same group name on another mount: a different group.
    const other = (await store.upsertGroupAlias({ name: 'developers', mount_accessor: ldap.accessor }))!;
    const e = await store.entityForLogin(jwt, { name: 'carol' }, ['developers', 'unknown']);
    expect(await store.groupIdsOf(e.id)).toEqual([dev.id]);
    expect((await store.groups.get(dev.id))?.member_entity_ids).toEqual([e.id]);
    expect((await store.groups.get(other.canonical_id))?.member_entity_ids).toEqual([]);
    expect((await store.tokenIdentity(e.id))?.policies).toEqual(['dev-p']);
    // The same login again changes nothing; a login without the group leaves it.
    await store.entityForLogin(jwt, { name: 'carol' }, ['developers']);
    await store.entityForLogin(jwt, { name: 'carol' }, []);
    expect(await store.groupIdsOf(e.id)).toEqual([]);
    // Persisted: a second store over the same storage reads the same.
    await store.entityForLogin(jwt, { name: 'carol' }, ['developers']);
    const again = new IdentityStore(storage, clock, mounts);
    expect(await again.groupIdsOf(e.id)).toEqual([dev.id]);
  });

  it('a login through an alias made by the API finds that entity', async () => {
    const { store } = fresh();
    const { entity } = await store.upsertEntity({ name: 'dave', policies: ['p'] });
    await store.upsertEntityAlias({ name: 'dave@example.com', mount_accessor: jwt.accessor, canonical_id: entity.id });
    const e = await store.entityForLogin(jwt, { name: 'dave@example.com', metadata: { k: 'v' } });
    expect(e.id).toBe(entity.id);
    expect(e.aliases[0]?.metadata).toEqual({ k: 'v' });
  });

  it('refuses unknown members, a member loop, and an unknown mount accessor, naming the field', async () => {
    const { store } = fresh();
    await expect(
      store.upsertGroup(null, { name: 'x', member_entity_ids: ['00000000-0000-0000-0000-000000000000'] }),
    ).rejects.toThrow(/member_entity_ids: invalid member entity ID/);
    const a = (await store.upsertGroup(null, { name: 'a' })).group;
    const b = (await store.upsertGroup(null, { name: 'b', member_group_ids: [a.id] })).group;
    const c = (await store.upsertGroup(null, { name: 'c', member_group_ids: [b.id] })).group;
    await expect(store.upsertGroup(a.id, { member_group_ids: [c.id] })).rejects.toThrow(/cyclic relationship detected/);
    await expect(store.upsertEntityAlias({ name: 'n', mount_accessor: 'auth_nope_1' })).rejects.toThrow(
      /mount_accessor: invalid mount accessor/,
    );
  });

  it('deleting a group drops it as a parent; deleting an entity drops its memberships', async () => {
    const { store } = fresh();
    const { entity } = await store.upsertEntity({ name: 'erin' });
    const child = (await store.upsertGroup(null, { name: 'child', member_entity_ids: [entity.id] })).group;
    const parent = (await store.upsertGroup(null, { name: 'parent', member_group_ids: [child.id] })).group;
    expect((await store.groups.get(child.id))?.parent_group_ids).toEqual([parent.id]);
    await store.deleteGroup(parent.id);
    expect((await store.groups.get(child.id))?.parent_group_ids).toEqual([]);
    await store.deleteEntity(entity.id);
    expect((await store.groups.get(child.id))?.member_entity_ids).toEqual([]);
  });

  it('merge moves group memberships and resolves the merged id to the surviving entity', async () => {
    const { store } = fresh();
    const to = (await store.upsertEntity({ name: 'to' })).entity;
    const from = (await store.upsertEntity({ name: 'from' })).entity;
    const g = (await store.upsertGroup(null, { name: 'g', policies: ['gp'], member_entity_ids: [from.id] })).group;
    await store.merge([from.id], to.id, []);
    expect((await store.groups.get(g.id))?.member_entity_ids).toEqual([to.id]);
    expect((await store.entity(from.id))?.id).toBe(to.id);
    expect((await store.tokenIdentity(from.id))?.policies).toEqual(['gp']);
    expect(await store.byName('from')).toBeNull();
  });
});

describe('GroupGraph', () => {
  const g = (id: string, parents: string[] = [], members: string[] = []): GroupRecord => ({
    id,
    name: id,
    type: 'internal',
    policies: [],
    metadata: {},
    member_entity_ids: members,
    parent_group_ids: parents,
    alias: null,
    creation_time: '',
    last_update_time: '',
    modify_index: 1,
  });

  it('walks parents once even when two paths reach a group (diamond)', () => {
    const graph = new GroupGraph();
    for (const x of [g('top'), g('l', ['top']), g('r', ['top']), g('leaf', ['l', 'r'], ['e1'])]) graph.put(x);
    const { direct, inherited } = graph.groupsOfEntity('e1');
    expect(direct.map((x) => x.id)).toEqual(['leaf']);
    expect(inherited.map((x) => x.id)).toEqual(['l', 'r', 'top']);
    expect(graph.wouldCycle('leaf', ['top'])).toBe('top');
    expect(graph.wouldCycle('top', ['leaf'])).toBeUndefined();
  });

  it('re-indexes a replaced group: old members and name no longer find it', () => {
    const graph = new GroupGraph();
    graph.put(g('x', [], ['e1']));
    graph.put({ ...g('x', [], ['e2']), name: 'renamed' });
    expect(graph.groupsWithMember('e1')).toEqual([]);
    expect(graph.groupsWithMember('e2').map((x) => x.id)).toEqual(['x']);
    expect(graph.byGroupName('x')).toBeUndefined();
    expect(graph.byGroupName('RENAMED')?.id).toBe('x');
  });
});
