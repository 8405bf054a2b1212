/**
 * The adapter from the command list (src/cli/commands/index.ts) to commander: each GroupSpec becomes a
 * command holding subcommands, each CommandSpec a command whose action builds an Invocation and runs
 * it. This is the only place where a command meets commander; a different parser (the `vault`-style
 * face of issue 34) would read the same list.
 */
import { Argument, Option, type Command } from 'commander';
import { isGroup, type ArgSpec, type CommandSpec, type Entry, type FlagSpec, type IO, type Values } from './command.js';
import { makeInvocation, type ClientFactory } from './invocation.js';
import { addYesOption, confirmCommand } from './tty.js';
import type { GlobalOptions } from './command.js';
import type { Face } from './face.js';

/** Find or create the nested command for words like "transit keys create". */
export function commandPath(root: Command, words: readonly string[]): Command {
  let cur = root;
  for (const w of words) {
    const existing = cur.commands.find((c) => c.name() === w);
    cur = existing ?? cur.command(w);
  }
  return cur;
}

/** The `--help` text after the options: notes, then examples. */
export function helpAfter(spec: Pick<CommandSpec, 'notes' | 'examples'>): string {
  const parts: string[] = [];
  if (spec.notes) parts.push(`\n${spec.notes}\n`);
  if (spec.examples?.length) parts.push('\nExamples:\n' + spec.examples.map((e) => `  $ ${e}`).join('\n'));
  return parts.join('');
}

/** The commander Argument of an ArgSpec. */
export function argument(a: ArgSpec): Argument {
  const n = a.name + (a.variadic ? '...' : '');
  const arg = new Argument(a.optional ? `[${n}]` : `<${n}>`, a.help);
  if (a.choices) arg.choices(a.choices);
  if (a.default !== undefined) arg.default(a.default);
  return arg;
}

/** The commander Option of a FlagSpec. */
export function option(f: FlagSpec): Option {
  const o = new Option(f.flags, f.help);
  if (f.parse) o.argParser(f.parse as (value: string, previous: unknown) => unknown);
  if (f.default !== undefined) o.default(f.default);
  if (f.choices) o.choices(f.choices);
  if (f.required) o.makeOptionMandatory();
  if (f.hidden) o.hideHelp();
  return o;
}

/** What actions need besides the parsed line. */
export interface AdapterDeps {
  io: IO;
  makeClient?: ClientFactory;
  /** Takes a command's exit status other than 0 (default: process.exitCode). */
  exit?: (status: number) => void;
  /** The face the program shows (default keyhold). */
  face?: Face;
}

function rootOf(cmd: Command): Command {
  let c = cmd;
  while (c.parent) c = c.parent;
  return c;
}

/** Add one command to `program`. */
export function mountCommand(program: Command, spec: CommandSpec, deps: AdapterDeps): Command {
  const parent = commandPath(program, spec.words.slice(0, -1));
  const name = spec.words[spec.words.length - 1]!;
  if (parent.commands.some((c) => c.name() === name))
    throw new Error(`command "${spec.words.join(' ')}" is listed twice`);
  const cmd = parent.command(name, spec.hidden ? { hidden: true } : {}).description(spec.summary);
  for (const a of spec.args ?? []) cmd.addArgument(argument(a));
  for (const f of spec.flags ?? []) cmd.addOption(option(f));
  if (spec.passThrough) cmd.allowUnknownOption().helpOption(false);
  if (spec.confirm) {
    const question = spec.confirm;
    addYesOption(cmd);
    cmd.hook('preAction', async (_self, action) => {
      // The vault CLI never asks: its face runs destructive commands as vault does.
      if (deps.face !== 'vault') await confirmCommand(action, question(action.args));
    });
  }
  const after = helpAfter(spec);
  if (after) cmd.addHelpText('after', after);
  cmd.action(async (...values: unknown[]) => {
    const c = values[values.length - 1] as Command;
    const args: Values = {};
    c.registeredArguments.forEach((a, i) => (args[a.name()] = values[i]));
    const inv = makeInvocation({
      args,
      opts: c.opts(),
      globals: c.optsWithGlobals() as GlobalOptions,
      io: deps.io,
      root: rootOf(c),
      makeClient: deps.makeClient,
      face: deps.face,
    });
    const status = await spec.run(inv);
    if (typeof status === 'number' && status !== 0) (deps.exit ?? ((n) => (process.exitCode = n)))(status);
  });
  return cmd;
}

/** Add every entry of the list to `program`, in order. */
export function mountAll(program: Command, entries: readonly Entry[], deps: AdapterDeps): void {
  for (const e of entries) {
    if (isGroup(e)) {
      const g = commandPath(program, e.words).description(e.summary);
      for (const a of e.aliases ?? []) g.alias(a);
    } else mountCommand(program, e, deps);
  }
}
