/** The documentation commands: completion, the hidden __complete, openapi, path-help, help. */
import type { Entry } from '../../command.js';
import { completion } from './completion.js';
import { complete } from './complete.js';
import { openapi } from './openapi.js';
import { pathHelp } from './path-help.js';
import { help } from './help.js';

export const docsCommands: Entry[] = [completion, complete, openapi, pathHelp, help];
