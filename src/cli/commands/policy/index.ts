/** The policy commands. */
import { group, type Entry } from '../../command.js';
import { write } from './write.js';
import { read } from './read.js';
import { list } from './list.js';
import { del } from './delete.js';

export const policyCommands: Entry[] = [group('policy', 'Manage ACL policies (HCL or JSON)'), write, read, list, del];
