/** Bad input to the identity API: a 400 naming the field, never a 500, and nothing written. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startHarness, type Harness } from '../../support/harness.js';

let d: Harness;
beforeAll(async () => {
  d = await startHarness();
});
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

const cases: Array<[string, string, Record<string, unknown>, RegExp]> = [
  ['entity metadata of the wrong type', 'identity/entity', { name: 'x', metadata: 5 }, /metadata/],
  [
    'entity metadata pair without "="',
    'identity/entity',
    { name: 'x', metadata: ['novalue'] },
    /metadata\[0\]: expected key=value/,
  ],
  ['entity policies as an object', 'identity/entity', { name: 'x', policies: { a: 1 } }, /policies/],
  ['entity name with a slash', 'identity/entity', { name: 'a/b' }, /name: /],
  ['entity name too long', 'identity/entity', { name: 'n'.repeat(300) }, /name: /],
  [
    'unknown entity id to update',
    'identity/entity',
    { id: '00000000-0000-0000-0000-000000000000' },
    /id: entity not found/,
  ],
  ['group of an unknown type', 'identity/group', { name: 'g', type: 'cosmic' }, /type: invalid group type "cosmic"/],
  [
    'group with a member that is no entity',
    'identity/group',
    { name: 'g', member_entity_ids: ['nope'] },
    /member_entity_ids: invalid member entity ID "nope"/,
  ],
  [
    'group with a member group that does not exist',
    'identity/group',
    { name: 'g', member_group_ids: ['nope'] },
    /member_group_ids: invalid member group ID/,
  ],
  ['group policies with root', 'identity/group', { name: 'g', policies: 'a,ROOT' }, /policies cannot contain root/],
  [
    'entity alias without a mount accessor',
    'identity/entity-alias',
    { name: 'a' },
    /mount_accessor: missing mount_accessor/,
  ],
  ['group alias without a name', 'identity/group-alias', { mount_accessor: 'x' }, /name: missing alias name/],
  [
    'merge without from ids',
    'identity/entity/merge',
    { to_entity_id: '00000000-0000-0000-0000-000000000000' },
    /from_entity_ids/,
  ],
  [
    'merge into an unknown entity',
    'identity/entity/merge',
    { from_entity_ids: ['a'], to_entity_id: '00000000-0000-0000-0000-000000000000' },
    /to_entity_id: entity id to merge to is invalid/,
  ],
  ['batch-delete without ids', 'identity/entity/batch-delete', {}, /entity_ids/],
  ['lookup with two criteria', 'identity/lookup/group', { id: 'a', name: 'b' }, /only one of/],
  ['lookup by alias name without accessor', 'identity/lookup/entity', { alias_name: 'a' }, /alias_mount_accessor/],
];

describe('identity API refuses bad input with 400 naming the field', () => {
  for (const [what, path, body, message] of cases) {
    it(what, async () => {
      const r = await d.req('POST', path, body);
      expect(r.status, r.text).toBe(400);
      expect(r.body.errors.join(' ')).toMatch(message);
    });
  }

  it('wrote nothing', async () => {
    expect((await d.req('LIST', 'identity/entity/id')).status).toBe(404);
    expect((await d.req('LIST', 'identity/group/id')).status).toBe(404);
  });
});
