/** OpenBao's soft deletion of transit keys: `keys/:name/soft-delete` and `keys/:name/soft-delete-restore`. */
import { invalid } from '../../../framework/errors.js';
import { f } from '../../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../../framework/route.js';
import { keyView } from '../keyring/key-view.js';
import type { TransitEngine } from '../transit-engine.js';

const route = routesFor<TransitEngine>();
const keyName = f.name('Name of the key');

function setSoftDeleted(deleted: boolean) {
  return async ({ engine, data }: { engine: TransitEngine; data: { name: string } }) => {
    const { key } = await engine.keys.update(
      data.name,
      () => invalid('name', `no existing key named ${data.name} could be found`),
      (draft) => {
        draft.softDeleted = deleted;
      },
    );
    return { data: keyView(key) };
  };
}

/** Routes: soft-delete, soft-delete-restore. */
export const softDeleteRoutes: AnyRoute[] = [
  route({
    path: 'keys/:name/soft-delete',
    summary: 'Mark a key deleted: it refuses every operation but read, backup, soft-delete-restore and delete',
    fields: { name: keyName },
    operations: { update: setSoftDeleted(true) },
  }),
  route({
    path: 'keys/:name/soft-delete-restore',
    summary: 'Undo a soft delete: the key serves every operation again',
    fields: { name: keyName },
    operations: { update: setSoftDeleted(false) },
  }),
];
