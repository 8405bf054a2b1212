/** The token commands. */
import { group, type Entry } from '../../command.js';
import { create } from './create.js';
import { lookup } from './lookup.js';
import { revoke } from './revoke.js';

export const tokenCommands: Entry[] = [group('token', 'Create, look up and revoke tokens'), create, lookup, revoke];
