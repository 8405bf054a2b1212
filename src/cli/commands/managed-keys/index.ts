/** The managed-keys commands. */
import { group, type Entry } from '../../command.js';
import { create } from './create.js';
import { list } from './list.js';
import { read } from './read.js';
import { del } from './delete.js';
import { testSign } from './test-sign.js';

export const managedKeysCommands: Entry[] = [
  group('managed-keys', 'Keys kept in an HSM (PKCS#11) or AWS KMS, usable by transit keys of type managed_key'),
  create,
  list,
  read,
  del,
  testSign,
];
