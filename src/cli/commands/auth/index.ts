/** The auth method commands. */
import { group, type Entry } from '../../command.js';
import { enable } from './enable.js';
import { disable } from './disable.js';
import { list } from './list.js';
import { tune } from './tune.js';

export const authCommands: Entry[] = [
  group('auth', 'Enable, list, tune and disable auth methods'),
  enable,
  disable,
  list,
  tune,
];
