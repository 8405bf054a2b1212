/** The program for one command line: only the commands of its first word (everything for help and unknown words). */
import type { Command } from 'commander';
import { commandWord } from './argv.js';
import type { AdapterDeps } from './commander-adapter.js';
import { entriesFor } from './commands/nouns.js';
import { createProgram } from './parser.js';

/** The program that parses `argv` (normalized) as the full program would. */
export async function buildProgramFor(argv: string[], deps?: AdapterDeps): Promise<Command> {
  return createProgram(await entriesFor(commandWord(argv)), deps);
}
