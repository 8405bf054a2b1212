/** The audit commands. */
import { group, type Entry } from '../../command.js';
import { enable } from './enable.js';
import { disable } from './disable.js';
import { list } from './list.js';

export const auditCommands: Entry[] = [
  group('audit', 'Audit devices: a JSON-lines log of every request, with sensitive values hashed'),
  enable,
  disable,
  list,
];
