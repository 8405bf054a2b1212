/** The generic path commands: read, write, list, delete (like `vault read` ...). */
import type { Entry } from '../../command.js';
import { read } from './read.js';
import { write } from './write.js';
import { list } from './list.js';
import { del } from './delete.js';

export const pathCommands: Entry[] = [read, write, list, del];
