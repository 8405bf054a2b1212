/**
 * The command model (cli-model.ts) built from the command list itself (src/cli/commands/index.ts),
 * not from a parsed program: the completions, man pages and reference describe exactly the list the
 * parser is made from. Flags strings are read by commander's own Option/Argument classes, so the
 * model says what the parser accepts; `-y, --yes` is added to the commands that ask first (`confirm`).
 */
import { isGroup, type CommandSpec, type Entry, type FlagSpec } from '../cli/command.js';
import { argument, option } from '../cli/commander-adapter.js';
import { GLOBAL_FLAGS, PROGRAM, PROGRAM_SUMMARY, VERSION_FLAG } from '../cli/globals.js';
import { apiOf, fieldHelp, fillOptionHelp, optionDoc, type CommandDoc, type MountedRoute } from './cli-model.js';
import { EXAMPLES, synthesizedUsage } from '../cli/examples.js';

const YES: FlagSpec = { flags: '-y, --yes', help: 'do not ask for confirmation' };

interface Node {
  words: string[];
  summary: string;
  spec?: CommandSpec;
  children: Node[];
}

/** The tree of the list: groups and commands in order of first mention, hidden commands left out. */
function tree(entries: readonly Entry[]): Node {
  const root: Node = { words: [], summary: PROGRAM_SUMMARY, children: [] };
  const at = (words: readonly string[]): Node => {
    let cur = root;
    for (let i = 0; i < words.length; i++) {
      let next = cur.children.find((c) => c.words[i] === words[i]);
      if (!next) cur.children.push((next = { words: words.slice(0, i + 1), summary: '', children: [] }));
      cur = next;
    }
    return cur;
  };
  for (const e of entries) {
    if (!isGroup(e) && e.hidden) continue;
    const node = at(e.words);
    node.summary = e.summary;
    if (!isGroup(e)) node.spec = e;
  }
  return root;
}

/** The examples of a command: its own, else the table's, else a usage line of a leaf. */
function examplesOf(node: Node): string[] {
  if (node.spec?.examples?.length) return [...node.spec.examples];
  const table = EXAMPLES[node.words.join(' ')];
  if (table?.length) return [...table];
  if (node.children.length) return [];
  return [
    synthesizedUsage(
      node.words,
      (node.spec?.args ?? []).filter((a) => !a.optional).map((a) => a.name),
    ),
  ];
}

function describeNode(node: Node, routes: ReadonlyArray<MountedRoute>): CommandDoc {
  const path = node.words;
  const { hit, api } = apiOf(routes, path);
  let flags = [...(node.spec?.flags ?? [])];
  if (node.spec?.confirm && !flags.some((f) => option(f).long === '--yes')) flags.push(YES);
  if (!path.length) flags = [VERSION_FLAG, ...GLOBAL_FLAGS];
  const options = flags.filter((f) => !f.hidden).map((f) => optionDoc(option(f)));
  fillOptionHelp(options, hit);
  return {
    path,
    name: path.length ? path[path.length - 1]! : PROGRAM,
    description: node.summary,
    args: (node.spec?.args ?? []).map((a) => {
      const arg = argument(a);
      return {
        name: a.name,
        description: arg.description || (fieldHelp(hit, a.name) ?? ''),
        required: arg.required,
        variadic: arg.variadic,
        choices: a.choices ? [...a.choices] : undefined,
      };
    }),
    options,
    subcommands: node.children.map((c) => describeNode(c, routes)),
    examples: path.length ? examplesOf(node) : [],
    api,
    ...(node.spec?.stdin ? { stdin: node.spec.stdin } : {}),
  };
}

/** The model of the whole CLI from the command list; `routes` maps cli hints to API routes. */
export function describeList(entries: readonly Entry[], routes: ReadonlyArray<MountedRoute> = []): CommandDoc {
  return describeNode(tree(entries), routes);
}
