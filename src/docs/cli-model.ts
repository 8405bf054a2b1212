/**
 * A plain model of the commander tree (commands, arguments, options, examples) that the completion,
 * man-page and reference generators read, so they all describe the same CLI.
 */
import type { Command, Option } from 'commander';
import type { AnyRoute } from '../framework/route.js';
import { examplesOf } from '../cli/examples.js';

/** A positional argument. */
export interface ArgDoc {
  name: string;
  description: string;
  required: boolean;
  variadic: boolean;
  choices?: string[];
}

/** An option. */
export interface OptionDoc {
  /** As declared: `-y, --yes`, `--type <type>`. */
  flags: string;
  long?: string;
  short?: string;
  description: string;
  /** Takes a value (required or optional). */
  takesValue: boolean;
  /** Name of the value in the flags (`<type>` -> type). */
  valueName?: string;
  choices?: string[];
  /** Default shown in docs; absolute paths are left out because they depend on the machine. */
  defaultValue?: string;
}

/** A command and its subcommands. */
export interface CommandDoc {
  /** Words after `keyhold`: ['transit', 'keys', 'create']. */
  path: string[];
  name: string;
  description: string;
  args: ArgDoc[];
  options: OptionDoc[];
  subcommands: CommandDoc[];
  examples: string[];
  /** HTTP route the command drives (from the route's `cli` hint), when known. */
  api?: { method: string; path: string };
  /** What the command reads from stdin, when it does. */
  stdin?: string;
}

/** The model of a commander option (its flags string parsed as commander parses it). */
export function optionDoc(o: Option): OptionDoc {
  const valueName = /[<[]([^>\]]+)[>\]]/.exec(o.flags)?.[1];
  let defaultValue: string | undefined;
  const d: unknown = o.defaultValue;
  if (o.defaultValueDescription) defaultValue = o.defaultValueDescription;
  else if ((typeof d === 'string' && d !== '' && !d.startsWith('/')) || typeof d === 'number') defaultValue = String(d);
  return {
    flags: o.flags,
    long: o.long,
    short: o.short,
    description: o.description ?? '',
    takesValue: o.required || o.optional,
    valueName: valueName?.replace(/\.\.\.$/, ''),
    choices: o.argChoices ? [...o.argChoices] : undefined,
    defaultValue: o.negate ? undefined : defaultValue,
  };
}

/** Whether commander would hide the command (created with `{ hidden: true }`). */
export function isHidden(cmd: Command): boolean {
  return Boolean((cmd as unknown as { _hidden?: boolean })._hidden);
}

/** Visible subcommands in declaration order (hidden ones and commander's implicit `help` left out). */
export function visibleSubcommands(cmd: Command): Command[] {
  return cmd.commands.filter((c) => !isHidden(c));
}

const METHOD: Record<string, string> = {
  create: 'POST',
  update: 'POST',
  read: 'GET',
  delete: 'DELETE',
  list: 'LIST',
  patch: 'PATCH',
};

/** A route of a mount, as the generators attach it to commands. */
export type MountedRoute = { mountPath: string; route: AnyRoute };

/** The route whose cli hint names the command `path`, and the API call it makes. */
export function apiOf(
  routes: ReadonlyArray<MountedRoute>,
  path: string[],
): { hit?: MountedRoute; api?: CommandDoc['api'] } {
  const key = path.join(' ');
  const hit = routes.find((r) => r.route.cli?.command === key);
  if (!hit) return {};
  const r = hit.route;
  const op = r.cli?.operation ?? (Object.keys(r.operations)[0] as string);
  return { hit, api: { method: METHOD[op] ?? 'POST', path: `${hit.mountPath}${r.path}` } };
}

/** Help of a route field, for options and arguments declared without help text. */
export function fieldHelp(hit: MountedRoute | undefined, field: string): string | undefined {
  return hit ? (hit.route.fields as Record<string, { spec: { help: string } }>)[field]?.spec.help : undefined;
}

/** Options without help text take the route field's description (`--key-version` -> key_version). */
export function fillOptionHelp(options: OptionDoc[], hit: MountedRoute | undefined): void {
  for (const o of options) {
    if (o.description || !o.long) continue;
    const help = fieldHelp(hit, o.long.slice(2).replace(/-/g, '_'));
    if (help) o.description = help;
  }
}

/** Build the model of `cmd` and its visible subcommands; `routes` maps cli hints to API routes. */
export function describeCommand(
  cmd: Command,
  routes: ReadonlyArray<MountedRoute> = [],
  path: string[] = [],
): CommandDoc {
  const { hit, api } = apiOf(routes, path);
  const options = cmd.options.filter((o) => !o.hidden).map(optionDoc);
  fillOptionHelp(options, hit);
  return {
    path,
    name: path.length ? path[path.length - 1]! : cmd.name(),
    description: cmd.description(),
    args: cmd.registeredArguments.map((a) => ({
      name: a.name(),
      description: a.description || (fieldHelp(hit, a.name()) ?? ''),
      required: a.required,
      variadic: a.variadic,
      choices: a.argChoices ? [...a.argChoices] : undefined,
    })),
    options,
    subcommands: visibleSubcommands(cmd).map((c) => describeCommand(c, routes, [...path, c.name()])),
    examples: path.length ? examplesOf(cmd, path) : [],
    api,
  };
}

/** Every command of the tree, depth first (the root first). */
export function flatten(doc: CommandDoc): CommandDoc[] {
  return [doc, ...doc.subcommands.flatMap(flatten)];
}

/** `keyhold transit keys create <name> [options]`. */
export function usageOf(doc: CommandDoc): string {
  const parts = ['keyhold', ...doc.path];
  if (doc.subcommands.length) parts.push('<command>');
  for (const a of doc.args) {
    const n = a.name + (a.variadic ? '...' : '');
    parts.push(a.required ? `<${n}>` : `[${n}]`);
  }
  if (doc.options.length) parts.push('[options]');
  return parts.join(' ');
}
