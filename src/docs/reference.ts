/** The command reference (docs/reference/cli.md), from the same command model as the man pages. */
import { flatten, usageOf, type CommandDoc, type OptionDoc } from './cli-model.js';

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function optionRow(o: OptionDoc): string {
  let text = o.description;
  if (o.choices?.length) text += ` (one of: ${o.choices.map((c) => `\`${c}\``).join(', ')})`;
  if (o.defaultValue !== undefined) text += ` (default: \`${o.defaultValue}\`)`;
  return `| \`${cell(o.flags)}\` | ${cell(text)} |`;
}

function anchor(c: CommandDoc): string {
  return ['keyhold', ...c.path].join('-');
}

/** Markdown reference of every command: usage, description, arguments, options, stdin, HTTP route, examples. */
export function commandReference(root: CommandDoc): string {
  const out: string[] = [
    '<!-- Generated from the command list (src/cli/commands/index.ts) by `npm run docs` (src/docs/reference.ts); do not edit. -->',
    '',
    '# Command reference',
    '',
    'Every command accepts the global options below and `-h, --help`. Run `keyhold help TOPIC` for `exit-codes`, `environment` and `formats`, and `keyhold path-help PATH` for an HTTP route.',
    '',
    '## Global options',
    '',
    '| Option | Description |',
    '|---|---|',
    ...root.options.map(optionRow),
    '',
    '## Commands',
    '',
  ];
  const all = flatten(root).filter((c) => c.path.length > 0);
  for (const c of all)
    out.push(
      `${'  '.repeat(c.path.length - 1)}- [\`keyhold ${c.path.join(' ')}\`](#${anchor(c)}): ${cell(c.description)}`,
    );
  out.push('');
  for (const c of all) {
    if (c.subcommands.length) {
      out.push(`<a id="${anchor(c)}"></a>`, '', `## \`keyhold ${c.path.join(' ')}\``, '', c.description, '');
      continue;
    }
    out.push(
      `<a id="${anchor(c)}"></a>`,
      '',
      `### \`keyhold ${c.path.join(' ')}\``,
      '',
      c.description,
      '',
      '```',
      usageOf(c),
      '```',
      '',
    );
    if (c.args.length) {
      out.push('| Argument | Description |', '|---|---|');
      for (const a of c.args)
        out.push(
          `| \`${a.name}${a.variadic ? '...' : ''}\`${a.required ? '' : ' (optional)'} | ${cell(a.description)} |`,
        );
      out.push('');
    }
    if (c.options.length) out.push('| Option | Description |', '|---|---|', ...c.options.map(optionRow), '');
    if (c.stdin) out.push(`Reads stdin: ${cell(c.stdin)}.`, '');
    if (c.api) out.push(`HTTP: \`${c.api.method} /v1/${c.api.path}\``, '');
    if (c.examples.length) out.push('```sh', ...c.examples.map((e) => `$ ${e}`), '```', '');
  }
  return out.join('\n').replace(/\n+$/, '\n');
}
