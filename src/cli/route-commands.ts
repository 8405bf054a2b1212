/**
 * Commands generated from route tables: a route with a `cli` hint becomes a commander command whose
 * positional arguments are the hint's `args` and whose flags are the route's fields
 * (`key_version` -> `--key-version`). Sensitive fields are refused as plain flag values: give them as
 * `@file` or `-` (stdin) so secrets never sit in argv.
 */
import type { Command } from 'commander';
import type { AnyRoute, Operation } from '../framework/route.js';
import type { CliContext } from './context.js';
import { LocalError } from './client.js';

const METHOD: Record<Operation, string> = { create: 'POST', update: 'POST', read: 'GET', delete: 'DELETE', list: 'LIST', patch: 'PATCH' };

/** `key_version` -> `key-version`. */
export function flagName(field: string): string {
  return field.replace(/_/g, '-');
}

/** Find or create the nested command for words like "transit keys create". */
export function commandPath(root: Command, words: string[]): Command {
  let cur = root;
  for (const w of words) {
    const existing = cur.commands.find((c) => c.name() === w);
    cur = existing ?? cur.command(w);
  }
  return cur;
}

/** Fill a route path template with parameters. */
export function fillPath(template: string, params: Record<string, string | undefined>): string {
  let out = template.replace(/\(([^()]*)\)/g, (_m, inner: string) => {
    const names = [...inner.matchAll(/[:*](\w+)/g)].map((m) => m[1]!);
    return names.every((n) => params[n] !== undefined && params[n] !== '') ? inner : '';
  });
  out = out.replace(/[:*](\w+)/g, (_m, n: string) => {
    const v = params[n];
    if (v === undefined) throw new LocalError(`missing argument <${n}>`);
    return n === 'path' ? v.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(v);
  });
  return out;
}

/** Register commands for every route in `routes` that has a cli hint. */
export function registerRouteCommands(program: Command, ctx: CliContext, routes: readonly AnyRoute[], opts: { defaultMount: string; skip?: (r: AnyRoute) => boolean }): void {
  for (const route of routes) {
    if (!route.cli || opts.skip?.(route)) continue;
    const hint = route.cli;
    const words = hint.command.split(' ');
    const parent = commandPath(program, words.slice(0, -1));
    if (parent.commands.some((c) => c.name() === words[words.length - 1])) continue;
    const cmd = parent.command(words[words.length - 1]!).description(route.summary);
    for (const a of hint.args ?? []) cmd.argument(`<${a}>`, route.fields[a]?.spec.help ?? a);
    cmd.option('--mount <path>', 'mount path of the engine', opts.defaultMount);
    for (const [name, field] of Object.entries(route.fields)) {
      if (hint.args?.includes(name)) continue;
      const spec = field.spec;
      const help = spec.help + (spec.sensitive ? ' (secret: give @file or - for stdin)' : '');
      if (spec.kind === 'bool') cmd.option(`--${flagName(name)} [bool]`, help);
      else cmd.option(`--${flagName(name)} <value>`, help);
    }
    if (hint.examples?.length) cmd.addHelpText('after', '\nExamples:\n' + hint.examples.map((e) => `  $ ${e}`).join('\n'));
    const op: Operation = hint.operation ?? (Object.keys(route.operations)[0] as Operation);
    cmd.action(async (...args: unknown[]) => {
      const c = args[args.length - 1] as Command;
      const flags = c.opts() as Record<string, unknown>;
      const params: Record<string, string> = {};
      (hint.args ?? []).forEach((a, i) => (params[a] = String(args[i])));
      const body: Record<string, unknown> = {};
      for (const [name, field] of Object.entries(route.fields)) {
        if (hint.args?.includes(name)) continue;
        const key = name.replace(/_(\w)/g, (_m, ch: string) => ch.toUpperCase());
        let v = flags[key];
        if (v === undefined) continue;
        if (typeof v === 'string') {
          if (field.spec.sensitive && !v.startsWith('@') && v !== '-') throw new LocalError(`--${flagName(name)} is secret: pass @file or - (stdin), not the value itself`);
          v = await ctx.valueOf(v);
        }
        body[name] = v === true ? true : v;
      }
      const mount = String(flags.mount).replace(/^\/+|\/+$/g, '');
      const path = `${mount}/${fillPath(route.path, params)}`.replace(/\/+$/, '');
      const client = ctx.client(c);
      const method = METHOD[op];
      const res =
        method === 'GET' || method === 'DELETE' || method === 'LIST'
          ? await client.request(method, Object.keys(body).length ? `${path}?${new URLSearchParams(body as Record<string, string>)}` : path)
          : await client.request(method, path, body);
      const data = res.body?.data ?? res.body?.auth ?? null;
      if (data !== null) await ctx.print(c, data);
      else if (res.status === 204) process.stderr.write(`Success! Data written to: ${path}\n`);
    });
  }
}
