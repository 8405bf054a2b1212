/** The commander program of a list of commands: global options, the commands, and the examples table. */
import { Command } from 'commander';
import { VERSION } from '../version.js';
import { applyExamples } from './examples.js';
import type { Entry } from './command.js';
import { mountAll, option, type AdapterDeps } from './commander-adapter.js';
import { GLOBAL_FLAGS, PROGRAM, PROGRAM_SUMMARY, VERSION_FLAG } from './globals.js';
import { processIO } from './invocation.js';
import { paint } from './output.js';

/** `error: unknown command 'x'` -> `Error: unknown command 'x' (see keyhold --help)`, one line. */
export function usageErrorLine(str: string): string {
  const msg = str
    .replace(/^error:\s*/i, '')
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .join(' ');
  return paint(process.stderr).red(`Error: ${msg} (see keyhold --help)`) + '\n';
}

/** Build the commander program of `entries` (usage errors throw CommanderError; settings are inherited by subcommands). */
export function createProgram(entries: readonly Entry[], deps: AdapterDeps = { io: processIO() }): Command {
  const program = new Command(PROGRAM).description(PROGRAM_SUMMARY).version(VERSION, VERSION_FLAG.flags);
  for (const f of GLOBAL_FLAGS) program.addOption(option(f));
  program
    .enablePositionalOptions(false)
    // Usage errors: one line on stderr naming the cause, exit 1 (main.ts maps the CommanderError).
    .exitOverride()
    .configureOutput({ outputError: (str, write) => write(usageErrorLine(str)) });
  // Our own `help` command (topics as well as commands) replaces commander's.
  program.helpCommand(false);
  mountAll(program, entries, deps);
  // The examples table for every command's --help that has none of its own (src/cli/examples.ts).
  applyExamples(program);
  return program;
}
