/**
 * What the shell completions know, per command path: subcommands, options and how each option value
 * and positional argument completes (fixed words, files, or the daemon). The bash, zsh and fish
 * generators render this one structure.
 */
import { flatten, type CommandDoc } from './cli-model.js';
import { argRule, optionRule, SYNC_TYPES, type DynamicRule } from './dynamic.js';
import { TOPICS } from '../cli/help-topics.js';

/** How a value completes. */
export type Values =
  | { kind: 'words'; words: string[] }
  | { kind: 'daemon'; source: string }
  | { kind: 'files' }
  | { kind: 'none' };

/** One option as the shells see it. */
export interface CompOption {
  long?: string;
  short?: string;
  description: string;
  takesValue: boolean;
  values: Values;
}

/** One positional argument. */
export interface CompArg {
  name: string;
  variadic: boolean;
  values: Values;
}

/** One command node. */
export interface CompNode {
  /** Words after `keyhold`, joined by spaces ('' for the root). */
  path: string;
  description: string;
  subs: Array<{ name: string; description: string }>;
  options: CompOption[];
  args: CompArg[];
}

/** The whole completion model. */
export interface CompSpec {
  nodes: CompNode[];
  /** Options of the root that apply to every command (commander reads them anywhere). */
  globals: CompOption[];
}

/** First sentence of a description, single line, for shell menus. */
export function shortText(s: string): string {
  const line = s.replace(/\s+/g, ' ').trim();
  const m = /^(.*?[.!?])(\s|$)/.exec(line);
  const first = m ? m[1]! : line;
  return first.length > 80 ? first.slice(0, 77) + '...' : first;
}

function valuesFor(choices: string[] | undefined, rule: DynamicRule | undefined, topLevel: string[]): Values {
  if (choices?.length) return { kind: 'words', words: choices };
  const source = rule?.source;
  switch (source) {
    case 'words':
      return { kind: 'words', words: [...(rule?.words ?? [])] };
    case undefined:
      return { kind: 'none' };
    case 'files':
      return { kind: 'files' };
    case 'sync-types':
      return { kind: 'words', words: [...SYNC_TYPES] };
    case 'help-topics':
      return { kind: 'words', words: [...TOPICS.map((t) => t.name), ...topLevel] };
    default:
      return { kind: 'daemon', source };
  }
}

/** Build the completion model from the command model. */
export function completionSpec(root: CommandDoc): CompSpec {
  const topLevel = root.subcommands.map((s) => s.name);
  const help: CompOption = {
    long: '--help',
    short: '-h',
    description: 'Show help for the command',
    takesValue: false,
    values: { kind: 'none' },
  };
  const globals: CompOption[] = [
    ...root.options.map((o) => ({
      long: o.long,
      short: o.short,
      description: shortText(o.description),
      takesValue: o.takesValue,
      values: o.takesValue
        ? valuesFor(o.choices, o.long ? optionRule([], o.long) : undefined, topLevel)
        : ({ kind: 'none' } as Values),
    })),
    help,
  ];
  const nodes: CompNode[] = flatten(root).map((doc) => ({
    path: doc.path.join(' '),
    description: shortText(doc.description),
    subs: doc.subcommands.map((s) => ({ name: s.name, description: shortText(s.description) })),
    options: doc.path.length
      ? doc.options.map((o) => ({
          long: o.long,
          short: o.short,
          description: shortText(o.description),
          takesValue: o.takesValue,
          values: o.takesValue
            ? valuesFor(o.choices, o.long ? optionRule(doc.path, o.long) : undefined, topLevel)
            : { kind: 'none' },
        }))
      : [],
    args: doc.args.map((a) => ({
      name: a.name,
      variadic: a.variadic,
      values: valuesFor(a.choices, argRule(doc.path, a.name), topLevel),
    })),
  }));
  return { nodes, globals };
}

/** Quote for a single-quoted POSIX shell string. */
export function sq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
