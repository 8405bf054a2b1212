/** The sync commands, in the order of `keyhold sync --help`. */
import { group, type Entry } from '../../command.js';
import { DESTINATION_TYPE_IDS } from '../../../sync/types.js';
import { create } from './dest/create.js';
import { update } from './dest/update.js';
import { read } from './dest/read.js';
import { list as destList } from './dest/list.js';
import { del } from './dest/delete.js';
import { remove, set } from './assoc/set.js';
import { list as assocList } from './assoc/list.js';
import { status } from './status.js';
import { config } from './config.js';

export const syncCommands: Entry[] = [
  group('sync', 'Secret sync: push KV v2 secrets to external secret stores'),
  group('sync dest', `Sync destinations (types: ${DESTINATION_TYPE_IDS.join(', ')})`, ['destination']),
  create,
  update,
  read,
  destList,
  del,
  group('sync assoc', 'Associations between KV v2 secrets and destinations', ['association']),
  set,
  remove,
  assocList,
  status,
  config,
];
