/**
 * Man pages (roff, `man` macros) from the command model: man/keyhold.1 and one page per command group
 * (keyhold-transit.1, ...): NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS, ENVIRONMENT, EXAMPLES.
 */
import { flatten, type CommandDoc, type OptionDoc } from './cli-model.js';
import { ENVIRONMENT, EXIT_CODES, FORMATS, type Entry } from '../cli/help-topics.js';

/** Escape text for roff: backslashes, hyphens of flags, and lines starting with a control character. */
export function roff(s: string): string {
  const t = s
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/`([^`]+)`/g, '\\fB$1\\fR')
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201c\u201d]/g, '"');
  return /^[.']/.test(t) ? '\\&' + t : t;
}

/** Top-level commands that get a page of their own: every group, and the server. */
export function pageGroups(root: CommandDoc): CommandDoc[] {
  return root.subcommands.filter((c) => c.subcommands.length > 0 || c.name === 'server');
}

function synopsisLine(c: CommandDoc): string {
  const parts = [`\\fBkeyhold ${roff(c.path.join(' '))}\\fR`];
  for (const a of c.args) {
    const n = `\\fI${roff(a.name)}\\fR${a.variadic ? '...' : ''}`;
    parts.push(a.required ? n : `[${n}]`);
  }
  if (c.options.length) parts.push('[\\fIoptions\\fR]');
  return parts.join(' ');
}

function optionItem(o: OptionDoc): string[] {
  const flags = o.flags
    .split(/,\s*/)
    .map((f) => {
      const m = /^(\S+)(?:\s+(.+))?$/.exec(f.trim())!;
      return `\\fB${roff(m[1]!)}\\fR${m[2] ? ' \\fI' + roff(m[2]) + '\\fR' : ''}`;
    })
    .join(', ');
  let text = roff(sentence(o.description));
  if (o.choices?.length) text += ` One of: ${o.choices.map((c) => `\\fB${roff(c)}\\fR`).join(', ')}.`;
  if (o.defaultValue !== undefined) text += ` Default: \\fB${roff(o.defaultValue)}\\fR.`;
  return ['.TP', flags, text];
}

function sentence(s: string): string {
  const t = s.trim();
  if (!t) return '';
  const cap = t[0]!.toUpperCase() + t.slice(1);
  return /[.!?]$/.test(cap) ? cap : cap + '.';
}

function entries(list: Entry[]): string[] {
  return list.flatMap((e) => ['.TP', `\\fB${roff(e.term)}\\fR`, roff(e.text)]);
}

function header(title: string, version: string): string[] {
  return [
    `.\\" Generated from the command tree by \`npm run docs\` (src/docs/man.ts); do not edit.`,
    `.TH ${roff(title.toUpperCase())} 1 "" "keyhold ${roff(version)}" "keyhold manual"`,
    '.nh',
    '.ad l',
  ];
}

function examplesBlock(cmds: CommandDoc[]): string[] {
  const out: string[] = ['.SH EXAMPLES'];
  for (const c of cmds) {
    if (!c.examples.length) continue;
    out.push('.PP', roff(sentence(c.description) || `keyhold ${c.path.join(' ')}`), '.RS 4', '.nf');
    for (const e of c.examples) out.push(roff(`$ ${e}`));
    out.push('.fi', '.RE');
  }
  return out;
}

function commonSections(root: CommandDoc, seeAlso: string[]): string[] {
  return [
    '.SH EXIT STATUS',
    ...entries(EXIT_CODES),
    '.SH ENVIRONMENT',
    ...entries(ENVIRONMENT),
    '.SH SEE ALSO',
    seeAlso.map((p, i) => `.BR ${p} (1)${i < seeAlso.length - 1 ? ',' : ''}`).join('\n'),
  ];
}

function describeCommands(cmds: CommandDoc[]): string[] {
  const out: string[] = [];
  for (const c of cmds) {
    out.push(`.SS "keyhold ${roff(c.path.join(' '))}"`, roff(sentence(c.description)));
    if (c.api) out.push('.PP', `HTTP: \\fB${c.api.method}\\fR /v1/${roff(c.api.path)}`);
  }
  return out;
}

function optionsOf(cmds: CommandDoc[]): string[] {
  const out: string[] = [];
  for (const c of cmds) {
    if (!c.options.length && !c.args.some((a) => a.description)) continue;
    out.push(`.SS "keyhold ${roff(c.path.join(' '))}"`);
    for (const a of c.args)
      if (a.description) out.push('.TP', `\\fI${roff(a.name)}\\fR`, roff(sentence(a.description)));
    for (const o of c.options) out.push(...optionItem(o));
  }
  return out;
}

function globalOptions(root: CommandDoc): string[] {
  return [
    '.SS "Global options"',
    ...root.options.flatMap(optionItem),
    '.TP',
    '\\fB\\-h\\fR, \\fB\\-\\-help\\fR',
    'Show help for any command.',
  ];
}

/** The page of one group (`keyhold-transit.1`). */
export function groupPage(root: CommandDoc, group: CommandDoc, version: string): string {
  const cmds = flatten(group).filter((c) => c.subcommands.length === 0);
  const name = `keyhold-${group.name}`;
  const lines = [
    ...header(name, version),
    '.SH NAME',
    `${roff(name)} \\- ${roff(group.description.replace(/\.$/, ''))}`,
    '.SH SYNOPSIS',
    cmds.map(synopsisLine).join('\n.br\n'),
    '.SH DESCRIPTION',
    roff(sentence(group.description)),
    ...describeCommands(cmds),
    '.SH OPTIONS',
    ...optionsOf(cmds),
    ...globalOptions(root),
    ...examplesBlock(cmds),
    ...commonSections(root, [
      'keyhold',
      ...pageGroups(root)
        .filter((g) => g !== group)
        .map((g) => `keyhold\\-${g.name}`),
    ]),
  ];
  return lines.join('\n') + '\n';
}

/** The main page, keyhold.1: overview, every command, global options and formats. */
export function mainPage(root: CommandDoc, version: string): string {
  const groups = pageGroups(root);
  const others = root.subcommands.filter((c) => !groups.includes(c));
  const lines = [
    ...header('keyhold', version),
    '.SH NAME',
    `keyhold \\- ${roff(root.description.replace(/^keyhold:\s*/, '').replace(/\.$/, ''))}`,
    '.SH SYNOPSIS',
    '\\fBkeyhold\\fR [\\fIglobal options\\fR] \\fIcommand\\fR [\\fIarguments\\fR] [\\fIoptions\\fR]',
    '.SH DESCRIPTION',
    roff(
      'keyhold is one program that is both a daemon serving a HashiCorp-Vault-compatible HTTP API (transit engine, KV version 2, tokens and policies, secret sync) on a Unix socket or TCP, and a command-line client of that daemon. Vault clients work against it unchanged.',
    ),
    '.PP',
    roff(
      'Start the daemon with `keyhold server`, then run any other command. Data goes to stdout and diagnostics to stderr; secrets are read from stdin or files, never from the command line.',
    ),
    '.SH COMMANDS',
    ...groups.flatMap((g) => [
      '.TP',
      `\\fBkeyhold ${roff(g.name)}\\fR`,
      `${roff(sentence(g.description))} See \\fBkeyhold\\-${roff(g.name)}\\fR(1).`,
    ]),
    ...describeCommands(others),
    '.SH OPTIONS',
    ...optionsOf(others),
    ...globalOptions(root),
    '.SH OUTPUT FORMATS',
    ...entries(FORMATS),
    ...examplesBlock(others),
    ...commonSections(
      root,
      groups.map((g) => `keyhold\\-${g.name}`),
    ),
  ];
  return lines.join('\n') + '\n';
}

/** Every page by file name (`keyhold.1`, `keyhold-transit.1`, ...). */
export function manPages(root: CommandDoc, version: string): Record<string, string> {
  const out: Record<string, string> = { 'keyhold.1': mainPage(root, version) };
  for (const g of pageGroups(root)) out[`keyhold-${g.name}.1`] = groupPage(root, g, version);
  return out;
}
