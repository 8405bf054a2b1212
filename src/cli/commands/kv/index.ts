/** The kv commands, in the order of `keyhold kv --help`. */
import { group, type Entry } from '../../command.js';
import { put } from './put.js';
import { patch } from './patch.js';
import { get } from './get.js';
import { list } from './list.js';
import { del } from './delete.js';
import { destroy, undelete } from './versions.js';
import { get as metadataGet } from './metadata/get.js';
import { patch as metadataPatch, put as metadataPut } from './metadata/write.js';
import { del as metadataDelete } from './metadata/delete.js';

export const kvCommands: Entry[] = [
  group('kv', 'Versioned key/value secrets (KV version 2), like `vault kv`'),
  put,
  patch,
  get,
  list,
  del,
  undelete,
  destroy,
  group('kv metadata', 'Settings, custom metadata and version history of secrets'),
  metadataGet,
  metadataPut,
  metadataPatch,
  metadataDelete,
];
