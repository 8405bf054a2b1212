/**
 * The CLI program: every command of the list (src/cli/commands/index.ts). `buildProgramFor` loads only
 * the part of the list a command line needs (src/cli/commands/nouns.ts); main.ts uses it.
 */
import type { Command } from 'commander';
import type { AdapterDeps } from './commander-adapter.js';
import { COMMANDS } from './commands/index.js';
import { createProgram } from './parser.js';

export { usageErrorLine } from './parser.js';

/** The program with every command. */
export function buildProgram(deps?: AdapterDeps): Command {
  return createProgram(COMMANDS, deps);
}
