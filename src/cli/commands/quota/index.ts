/** The quota commands (rate-limit quotas, issue 28). */
import { group, type Entry } from '../../command.js';
import { list } from './list.js';
import { read } from './read.js';
import { write } from './write.js';
import { del } from './delete.js';

export const quotaCommands: Entry[] = [
  group('quota', 'Rate-limit quotas: requests per interval per client address, on a mount, a path or globally'),
  list,
  read,
  write,
  del,
];
