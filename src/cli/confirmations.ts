/**
 * Destructive commands ask before they run when stdin and stderr are a terminal (src/cli/tty.ts
 * `confirm`); each declares its question (`confirm` of its CommandSpec) and gets `-y/--yes`. On pipes
 * and in scripts it proceeds, so automation never hangs on a prompt. A declined prompt exits 1 with
 * nothing changed. This is the table of them, read from the command list.
 */
import { isGroup, type CommandSpec } from './command.js';
import { COMMANDS } from './commands/index.js';

/** Command path -> the question asked (from its positional arguments). */
export const DESTRUCTIVE: Readonly<Record<string, (args: string[]) => string>> = Object.fromEntries(
  COMMANDS.filter((e): e is CommandSpec => !isGroup(e) && e.confirm !== undefined).map((c) => [
    c.words.join(' '),
    c.confirm!,
  ]),
);
