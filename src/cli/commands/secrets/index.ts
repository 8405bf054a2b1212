/** The secrets (engine mount) commands. */
import { group, type Entry } from '../../command.js';
import { enable } from './enable.js';
import { disable } from './disable.js';
import { list } from './list.js';

export const secretsCommands: Entry[] = [
  group('secrets', 'Mount, list and unmount secrets engines'),
  enable,
  disable,
  list,
];
