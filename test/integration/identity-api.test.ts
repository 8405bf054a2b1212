/**
 * The identity API against a real daemon, as hvac's own integration test drives it
 * (hvac tests/integration_tests/api/secrets_engines/test_identity.py, with hvac/api/secrets_engines/
 * identity.py for the requests each call sends): each case enables an approle mount, runs the calls and
 * their assertions, then tears down the way the hvac test does (list + delete entities, aliases,
 * groups; disable the mount). Then what the store means for tokens: entity and group policies (direct
 * and inherited) apply to an entity's tokens and stop applying when membership changes, templated
 * policies see group names and metadata, and a disabled entity's tokens are refused.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;
let accessor: string;
const MP = 'identity';

beforeAll(async () => {
  d = await startDaemon();
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(
  method: string,
  path: string,
  body?: unknown,
  status?: number,
): Promise<{ status: number; body: any; text: string }> {
  const r = await d.req(method, `${MP}/${path}`, body);
  if (status !== undefined) expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}

// hvac setUp / tearDown.
beforeEach(async () => {
  expect((await d.req('POST', 'sys/auth/identity-test-approle', { type: 'approle' })).status).toBe(204);
  accessor = (await d.req('GET', 'sys/auth')).body.data['identity-test-approle/'].accessor;
});
afterEach(async () => {
  const ents = await call('LIST', 'entity/id');
  for (const id of ents.status === 200 ? ents.body.data.keys : [])
    await call('DELETE', `entity/id/${id}`, undefined, 204);
  const aliases = await call('LIST', 'entity-alias/id');
  for (const id of aliases.status === 200 ? aliases.body.data.keys : [])
    await call('DELETE', `entity-alias/id/${id}`, undefined, 204);
  const groups = await call('LIST', 'group/id');
  for (const id of groups.status === 200 ? groups.body.data.keys : [])
    await call('DELETE', `group/id/${id}`, undefined, 204);
  expect((await d.req('DELETE', 'sys/auth/identity-test-approle')).status).toBe(204);
});

const createEntity = async (name = 'test-entity', extra: Record<string, unknown> = {}) =>
  (await call('POST', 'entity', { name, ...extra }, 200)).body.data.id as string;
const createAlias = async (canonical_id?: string) =>
  (await call('POST', 'entity-alias', { name: 'test-alias', canonical_id, mount_accessor: accessor }, 200)).body.data;

describe('hvac test_identity.py: entities', () => {
  it('create answers the id; posting the same name updates with 204; by id with 204', async () => {
    const created = await call('POST', 'entity', { name: 'test-entity', metadata: { something: 'meta' } }, 200);
    expect(created.body.data).toEqual({
      aliases: null,
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'test-entity',
    });
    const id = created.body.data.id;
    await call('POST', 'entity', { name: 'test-entity', id }, 204);
    await call('POST', 'entity/name/test-entity', { metadata: { a: 'b' } }, 204);
    await call('POST', `entity/id/${id}`, { metadata: { something: 'else' } }, 204);
    const read = await call('GET', `entity/id/${id}`, undefined, 200);
    expect(read.body.data).toMatchObject({
      id,
      name: 'test-entity',
      metadata: { something: 'else' },
      policies: [],
      disabled: false,
      aliases: [],
      direct_group_ids: [],
      group_ids: [],
      inherited_group_ids: [],
      namespace_id: 'root',
      merged_entity_ids: null,
    });
  });

  it('create by name answers 200 with the id; read by name; unknown id and name are 404', async () => {
    const r = await call('POST', 'entity/name/test-entity', { policies: 'p1,p2' }, 200);
    expect((await call('GET', 'entity/name/test-entity', undefined, 200)).body.data).toMatchObject({
      id: r.body.data.id,
      policies: ['p1', 'p2'],
    });
    await call('GET', 'entity/id/00000000-0000-0000-0000-000000000000', undefined, 404);
    await call('GET', 'entity/name/nobody', undefined, 404);
  });

  it('delete by id and by name answer 204 whether or not the entity exists', async () => {
    const id = await createEntity();
    await call('DELETE', `entity/id/${id}`, undefined, 204);
    await call('DELETE', `entity/id/${id}`, undefined, 204);
    await createEntity();
    await call('DELETE', 'entity/name/test-entity', undefined, 204);
    await call('DELETE', 'entity/name/test-entity', undefined, 204);
    await call('GET', 'entity/name/test-entity', undefined, 404);
  });

  it('lists by id and by name with LIST and GET ?list=true', async () => {
    const id = await createEntity();
    expect((await call('LIST', 'entity/id', undefined, 200)).body.data.keys).toEqual([id]);
    expect((await call('GET', 'entity/id?list=true', undefined, 200)).body.data.keys).toEqual([id]);
    const byName = await call('LIST', 'entity/name', undefined, 200);
    expect(byName.body.data.keys).toEqual(['test-entity']);
    expect(byName.body.data.key_info[id]).toMatchObject({ name: 'test-entity', aliases: [] });
  });

  it('merges entities (also with conflicting_alias_ids_to_keep and a comma string), 204', async () => {
    const to = await createEntity();
    const a = await createEntity('test-entity2');
    const b = await createEntity('test-entity3');
    await call('POST', 'entity/merge', { from_entity_ids: [a], to_entity_id: to }, 204);
    await call(
      'POST',
      'entity/merge',
      { from_entity_ids: b, to_entity_id: to, conflicting_alias_ids_to_keep: [a] },
      204,
    );
    expect((await call('GET', `entity/id/${to}`, undefined, 200)).body.data.merged_entity_ids).toEqual([a, b]);
    expect((await call('LIST', 'entity/id', undefined, 200)).body.data.keys).toEqual([to]);
    // A merged id still finds the entity it became (tokens of the merged entity keep working).
    expect((await call('POST', 'lookup/entity', { id: a }, 200)).body.data.id).toBe(to);
  });

  it('merge moves aliases and refuses two aliases on one mount unless told which to keep', async () => {
    const to = await createEntity();
    const from = await createEntity('test-entity2');
    const keepMe = (await call('POST', 'entity-alias', { name: 'x', canonical_id: to, mount_accessor: accessor }, 200))
      .body.data.id;
    const other = (await call('POST', 'entity-alias', { name: 'y', canonical_id: from, mount_accessor: accessor }, 200))
      .body.data.id;
    const refused = await call('POST', 'entity/merge', { from_entity_ids: [from], to_entity_id: to }, 400);
    expect(refused.text).toContain('conflicting mount accessors');
    expect(refused.text).toContain(other);
    await call(
      'POST',
      'entity/merge',
      { from_entity_ids: [from], to_entity_id: to, conflicting_alias_ids_to_keep: [other] },
      204,
    );
    const merged = (await call('GET', `entity/id/${to}`, undefined, 200)).body.data;
    expect(merged.aliases.map((x: { id: string }) => x.id)).toEqual([other]);
    expect(merged.aliases[0]).toMatchObject({ canonical_id: to, merged_from_canonical_ids: [from], name: 'y' });
    await call('GET', `entity-alias/id/${keepMe}`, undefined, 404);
    await call('POST', 'entity/merge', { from_entity_ids: [to], to_entity_id: to }, 400);
  });

  it('batch-delete removes the entities given', async () => {
    const a = await createEntity('a1');
    const b = await createEntity('b1');
    const c = await createEntity('c1');
    await call('POST', 'entity/batch-delete', { entity_ids: [a, b] }, 204);
    expect((await call('LIST', 'entity/id', undefined, 200)).body.data.keys).toEqual([c]);
  });

  it('refuses root among policies and a name held by another entity, naming the field', async () => {
    expect((await call('POST', 'entity', { name: 'r', policies: ['root'] }, 400)).text).toContain(
      'policies cannot contain root',
    );
    const id = await createEntity();
    await createEntity('other');
    expect((await call('POST', `entity/id/${id}`, { name: 'other' }, 400)).text).toContain(
      'entity name is already in use',
    );
  });
});

describe('hvac test_identity.py: entity aliases', () => {
  it('creates an alias on a new entity and on a given one; reads, lists, updates idempotently, deletes', async () => {
    const fresh = await createAlias();
    expect(fresh).toEqual({ id: expect.any(String), canonical_id: expect.any(String) });
    await call('DELETE', `entity/id/${fresh.canonical_id}`, undefined, 204);
    const id = await createEntity();
    const a = await createAlias(id);
    expect(a.canonical_id).toBe(id);
    const read = await call('GET', `entity-alias/id/${a.id}`, undefined, 200);
    expect(read.body.data).toMatchObject({
      id: a.id,
      canonical_id: id,
      name: 'test-alias',
      mount_accessor: accessor,
      mount_path: 'auth/identity-test-approle/',
      mount_type: 'approle',
      namespace_id: 'root',
      local: false,
    });
    expect((await call('LIST', 'entity-alias/id', undefined, 200)).body.data.keys).toEqual([a.id]);
    expect((await call('GET', 'entity-alias/id?list=true', undefined, 200)).body.data.keys).toEqual([a.id]);
    await call(
      'POST',
      `entity-alias/id/${a.id}`,
      { name: 'test-alias', canonical_id: id, mount_accessor: accessor },
      204,
    );
    const renamed = await call(
      'POST',
      `entity-alias/id/${a.id}`,
      { name: 'renamed', canonical_id: id, mount_accessor: accessor },
      200,
    );
    expect(renamed.body.data).toEqual({ id: a.id, canonical_id: id });
    expect((await call('GET', `entity/id/${id}`, undefined, 200)).body.data.aliases[0].name).toBe('renamed');
    await call('DELETE', `entity-alias/id/${a.id}`, undefined, 204);
    await call('DELETE', `entity-alias/id/${a.id}`, undefined, 204);
    await call('GET', `entity-alias/id/${a.id}`, undefined, 404);
  });

  it('refuses an unknown mount accessor with 400 "invalid mount accessor"', async () => {
    const id = await createEntity();
    const a = await createAlias(id);
    const r = await call(
      'POST',
      `entity-alias/id/${a.id}`,
      { name: 'test-alias', canonical_id: id, mount_accessor: 'not a valid accessor' },
      400,
    );
    expect(r.text).toContain('invalid mount accessor');
  });

  it('deleting the entity deletes its aliases (the alias list is then 404)', async () => {
    const id = await createEntity();
    await createAlias(id);
    await call('DELETE', `entity/id/${id}`, undefined, 204);
    await call('LIST', 'entity-alias/id', undefined, 404);
  });
});

describe('hvac test_identity.py: groups and group aliases', () => {
  it('creates an internal group with member entities and groups; reads them back', async () => {
    const entity = await createEntity();
    const member = (await call('POST', 'group', { name: 'test-group-member', type: 'internal' }, 200)).body.data.id;
    const created = await call(
      'POST',
      'group',
      {
        name: 'test-group',
        type: 'internal',
        metadata: { something: 'meta' },
        member_group_ids: [member],
        member_entity_ids: [entity],
      },
      200,
    );
    const id = created.body.data.id;
    expect(created.body.data).toEqual({ id, name: 'test-group' });
    const read = (await call('GET', `group/id/${id}`, undefined, 200)).body.data;
    expect(read).toMatchObject({
      id,
      name: 'test-group',
      type: 'internal',
      member_group_ids: [member],
      member_entity_ids: [entity],
      metadata: { something: 'meta' },
      parent_group_ids: null,
      policies: null,
      alias: {},
      namespace_id: 'root',
    });
    expect((await call('GET', `group/id/${member}`, undefined, 200)).body.data.parent_group_ids).toEqual([id]);
    // Updates answer 204; the group keeps its id.
    await call(
      'POST',
      'group',
      { name: 'test-group', id, type: 'internal', member_group_ids: [member], member_entity_ids: [entity] },
      204,
    );
    await call(
      'POST',
      `group/id/${id}`,
      { name: 'test-group', type: 'internal', member_group_ids: [member], member_entity_ids: [entity] },
      204,
    );
    expect((await call('GET', `group/id/${id}`, undefined, 200)).body.data.modify_index).toBeGreaterThan(
      read.modify_index,
    );
    const e = (await call('GET', `entity/id/${entity}`, undefined, 200)).body.data;
    expect(e.direct_group_ids).toEqual([id]);
  });

  it('an external group has no members to set: null member lists; type cannot change', async () => {
    const id = (await call('POST', 'group', { name: 'test-group', type: 'external' }, 200)).body.data.id;
    const read = (await call('GET', `group/id/${id}`, undefined, 200)).body.data;
    expect(read.member_entity_ids).toBeNull();
    expect(read.member_group_ids).toBeNull();
    expect((await call('POST', `group/id/${id}`, { name: 'test-group', type: 'internal' }, 400)).text).toContain(
      'group type cannot be changed',
    );
    expect((await call('POST', `group/id/${id}`, { member_entity_ids: [id] }, 400)).text).toContain(
      "member entities can't be set manually for external groups",
    );
  });

  it('group by name: create or update, read, list, delete', async () => {
    const id = (await call('POST', 'group', { name: 'test-group', type: 'internal' }, 200)).body.data.id;
    await call('POST', 'group/name/test-group', { type: 'internal', metadata: { something: 'meta' } }, 204);
    expect((await call('GET', 'group/name/test-group', undefined, 200)).body.data).toMatchObject({
      id,
      metadata: { something: 'meta' },
    });
    expect((await call('POST', 'group/name/test-group', { type: 'external' }, 400)).text).toContain(
      'group type cannot be changed',
    );
    expect((await call('LIST', 'group/name', undefined, 200)).body.data.keys).toEqual(['test-group']);
    expect((await call('GET', 'group/id?list=true', undefined, 200)).body.data.keys).toEqual([id]);
    await call('DELETE', 'group/name/test-group', undefined, 204);
    await call('GET', 'group/name/test-group', undefined, 404);
  });

  it('group aliases: a new alias without canonical_id gets a new external group; read, list, update, delete', async () => {
    await call('POST', 'group', { name: 'test-entity' }, 200);
    const created = (await call('POST', 'group-alias', { name: 'test-group', mount_accessor: accessor }, 200)).body
      .data;
    const g = (await call('GET', `group/id/${created.canonical_id}`, undefined, 200)).body.data;
    expect(g).toMatchObject({
      type: 'external',
      alias: {
        id: created.id,
        name: 'test-group',
        mount_accessor: accessor,
        mount_path: 'auth/identity-test-approle/',
      },
    });
    // hvac "update success": same name and mount with the alias id is idempotent (204).
    await call('POST', 'group-alias', { name: 'test-group', id: created.id, mount_accessor: accessor }, 204);
    expect((await call('GET', `group-alias/id/${created.id}`, undefined, 200)).body.data).toMatchObject({
      id: created.id,
      canonical_id: created.canonical_id,
      name: 'test-group',
    });
    expect((await call('LIST', 'group-alias/id', undefined, 200)).body.data.keys).toEqual([created.id]);
    await call('GET', 'group-alias/id/00000000-0000-0000-0000-000000000000', undefined, 404);
    expect((await call('POST', 'group-alias', { name: 'test-group', mount_accessor: accessor }, 400)).text).toContain(
      'already in use',
    );
    await call('DELETE', `group-alias/id/${created.id}`, undefined, 204);
    await call('GET', `group-alias/id/${created.id}`, undefined, 404);
  });

  it('refuses an alias on an internal group, and member groups that would make a loop', async () => {
    const a = (await call('POST', 'group', { name: 'ga' }, 200)).body.data.id;
    expect(
      (await call('POST', 'group-alias', { name: 'x', mount_accessor: accessor, canonical_id: a }, 400)).text,
    ).toContain("alias can't be set on an internal group");
    const b = (await call('POST', 'group', { name: 'gb', member_group_ids: [a] }, 200)).body.data.id;
    expect((await call('POST', `group/id/${a}`, { member_group_ids: [b] }, 400)).text).toContain('cyclic relationship');
    expect((await call('POST', `group/id/${a}`, { member_group_ids: [a] }, 400)).text).toContain('cyclic relationship');
  });
});

describe('hvac test_identity.py: lookups', () => {
  it('lookup/entity by id and alias id; a missing entity answers 204', async () => {
    const id = await createEntity();
    const a = await createAlias(id);
    expect((await call('POST', 'lookup/entity', { id }, 200)).body.data.name).toBe('test-entity');
    expect((await call('POST', 'lookup/entity', { alias_id: a.id }, 200)).body.data.aliases[0].name).toBe('test-alias');
    expect(
      (await call('POST', 'lookup/entity', { alias_name: 'test-alias', alias_mount_accessor: accessor }, 200)).body.data
        .id,
    ).toBe(id);
    await call('POST', 'lookup/entity', { id: 'entity_id' }, 204);
    expect((await call('POST', 'lookup/entity', {}, 400)).text).toContain('must be provided');
  });

  it('lookup/group by id, name, alias id, alias name and accessor; a missing group answers 204', async () => {
    const gid = (await call('POST', 'group', { name: 'test-group', type: 'external' }, 200)).body.data.id;
    const alias = (
      await call('POST', 'group-alias', { name: 'test-group-alias', canonical_id: gid, mount_accessor: accessor }, 200)
    ).body.data;
    expect(alias.canonical_id).toBe(gid);
    expect((await call('POST', 'lookup/group', { id: gid }, 200)).body.data.name).toBe('test-group');
    expect((await call('POST', 'lookup/group', { name: 'test-group' }, 200)).body.data.name).toBe('test-group');
    expect((await call('POST', 'lookup/group', { alias_id: alias.id }, 200)).body.data.alias.name).toBe(
      'test-group-alias',
    );
    expect(
      (await call('POST', 'lookup/group', { alias_name: 'test-group-alias', alias_mount_accessor: accessor }, 200)).body
        .data.alias.name,
    ).toBe('test-group-alias');
    await call('POST', 'lookup/group', { id: 'group_id' }, 204);
  });
});

describe('identity policies on tokens', () => {
  let lastAuth: Record<string, unknown> = {};
  /** An approle login whose entity is `entityId` (the alias ties the role id to it), with `default` only. */
  async function loginAs(entityId: string): Promise<string> {
    await d.req('POST', 'auth/identity-test-approle/role/r', { token_policies: ['default'] });
    const roleId = (await d.req('GET', 'auth/identity-test-approle/role/r/role-id')).body.data.role_id;
    const secretId = (await d.req('POST', 'auth/identity-test-approle/role/r/secret-id')).body.data.secret_id;
    await call('POST', 'entity-alias', { name: roleId, canonical_id: entityId, mount_accessor: accessor }, 200);
    const r = await d.req(
      'POST',
      'auth/identity-test-approle/login',
      { role_id: roleId, secret_id: secretId },
      { token: null },
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.auth.entity_id).toBe(entityId);
    lastAuth = r.body.auth;
    return r.body.auth.client_token;
  }
  const kvRead = async (token: string, path: string) =>
    (await d.req('GET', `secret/data/${path}`, undefined, { token })).status;

  beforeAll(async () => {
    await d.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } });
    for (const p of ['a', 'b', 'c', 'eng-meta', 'team-x']) await d.req('POST', `secret/data/${p}`, { data: { v: p } });
    await d.req('PUT', 'sys/policies/acl/read-a', { policy: 'path "secret/data/a" { capabilities = ["read"] }' });
    await d.req('PUT', 'sys/policies/acl/read-b', { policy: 'path "secret/data/b" { capabilities = ["read"] }' });
    await d.req('PUT', 'sys/policies/acl/read-c', { policy: 'path "secret/data/c" { capabilities = ["read"] }' });
    await d.req('PUT', 'sys/policies/acl/tpl', {
      policy:
        'path "secret/data/{{identity.groups.names.eng.metadata.area}}" { capabilities = ["read"] }\npath "secret/data/{{identity.entity.metadata.team}}" { capabilities = ["read"] }',
    });
  });

  it('entity, group and parent-group policies apply to the token and follow membership changes', async () => {
    const id = await createEntity('person', { policies: ['read-a'] });
    const token = await loginAs(id);
    expect(await kvRead(token, 'a')).toBe(200);
    expect(await kvRead(token, 'b')).toBe(403);
    const parent = (await call('POST', 'group', { name: 'parent', policies: ['read-c'] }, 200)).body.data.id;
    const child = (await call('POST', 'group', { name: 'child', policies: ['read-b'], member_entity_ids: [id] }, 200))
      .body.data.id;
    expect(await kvRead(token, 'b')).toBe(200);
    expect(await kvRead(token, 'c')).toBe(403);
    await call('POST', `group/id/${parent}`, { member_group_ids: [child] }, 204);
    expect(await kvRead(token, 'c')).toBe(200);
    const e = (await call('GET', `entity/id/${id}`, undefined, 200)).body.data;
    expect(e).toMatchObject({ direct_group_ids: [child], inherited_group_ids: [parent] });
    const caps = await d.req('POST', 'sys/capabilities-self', { path: 'secret/data/c' }, { token });
    expect(caps.body.capabilities).toEqual(['read']);
    const self = await d.req('GET', 'auth/token/lookup-self', undefined, { token });
    expect(self.body.data).toMatchObject({ policies: ['default'], identity_policies: ['read-a', 'read-b', 'read-c'] });
    // Leaving the child group takes both group policies away at once.
    await call('POST', `group/id/${child}`, { member_entity_ids: [] }, 204);
    expect(await kvRead(token, 'b')).toBe(403);
    expect(await kvRead(token, 'c')).toBe(403);
    expect(await kvRead(token, 'a')).toBe(200);
    // Entity policy changes apply too.
    await call('POST', `entity/id/${id}`, { policies: [] }, 204);
    expect(await kvRead(token, 'a')).toBe(403);
  });

  it('templated policies see group metadata and entity metadata', async () => {
    const id = await createEntity('person', { policies: ['tpl'], metadata: { team: 'team-x' } });
    const token = await loginAs(id);
    expect(await kvRead(token, 'team-x')).toBe(200);
    expect(await kvRead(token, 'eng-meta')).toBe(403);
    await call('POST', 'group', { name: 'eng', metadata: { area: 'eng-meta' }, member_entity_ids: [id] }, 200);
    expect(await kvRead(token, 'eng-meta')).toBe(200);
  });

  it("a disabled entity's tokens are refused and work again when it is enabled", async () => {
    const id = await createEntity('person', { policies: ['read-a'] });
    const token = await loginAs(id);
    // The login answers the identity policies apart and in policies, as Vault does.
    expect(lastAuth).toMatchObject({
      policies: ['default', 'read-a'],
      token_policies: ['default'],
      identity_policies: ['read-a'],
    });
    expect(await kvRead(token, 'a')).toBe(200);
    await call('POST', `entity/id/${id}`, { disabled: true }, 204);
    expect(await kvRead(token, 'a')).toBe(403);
    // No new token either: the login is refused.
    const roleId = (await d.req('GET', 'auth/identity-test-approle/role/r/role-id')).body.data.role_id;
    const secretId = (await d.req('POST', 'auth/identity-test-approle/role/r/secret-id')).body.data.secret_id;
    expect(
      (
        await d.req(
          'POST',
          'auth/identity-test-approle/login',
          { role_id: roleId, secret_id: secretId },
          { token: null },
        )
      ).status,
    ).toBe(403);
    await call('POST', `entity/id/${id}`, { disabled: false }, 204);
    expect(await kvRead(token, 'a')).toBe(200);
  });
});
