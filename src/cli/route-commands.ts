/**
 * Commands generated from route tables: a route with a `cli` hint becomes a CommandSpec whose
 * positional arguments are the hint's `args` and whose flags are the route's fields
 * (`key_version` -> `--key-version`). Sensitive fields are refused as plain flag values: give them as
 * `@file` or `-` (stdin) so secrets never sit in argv.
 */
import type { AnyRoute, Operation } from '../framework/route.js';
import type { CommandSpec, FlagSpec } from './command.js';
import { LocalError } from './errors.js';
import { flagName, resolvedBodyOf } from './route-flags.js';

const METHOD: Record<Operation, string> = {
  create: 'POST',
  update: 'POST',
  read: 'GET',
  delete: 'DELETE',
  list: 'LIST',
  patch: 'PATCH',
};

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

/** The command of one route with a cli hint. */
export function routeCommand(route: AnyRoute, defaultMount: string, confirm?: CommandSpec['confirm']): CommandSpec {
  const hint = route.cli!;
  const flags: FlagSpec[] = [{ flags: '--mount <path>', help: 'mount path of the engine', default: defaultMount }];
  for (const [name, field] of Object.entries(route.fields)) {
    if (hint.args?.includes(name)) continue;
    const spec = field.spec;
    const help = spec.help + (spec.sensitive ? ' (secret: give @file or - for stdin)' : '');
    flags.push({ flags: `--${flagName(name)} ${spec.kind === 'bool' ? '[bool]' : '<value>'}`, help, field: name });
  }
  const op: Operation = hint.operation ?? (Object.keys(route.operations)[0] as Operation);
  return {
    words: hint.command.split(' '),
    summary: route.summary,
    args: (hint.args ?? []).map((a) => ({ name: a, help: route.fields[a]?.spec.help ?? a })),
    flags,
    examples: hint.examples,
    confirm,
    async run(inv) {
      const params: Record<string, string> = {};
      for (const a of hint.args ?? []) params[a] = String(inv.args[a]);
      const body = await resolvedBodyOf(route, flags, inv);
      const mount = String(inv.opts.mount).replace(/^\/+|\/+$/g, '');
      const path = `${mount}/${fillPath(route.path, params)}`.replace(/\/+$/, '');
      const method = METHOD[op];
      const res =
        method === 'GET' || method === 'DELETE' || method === 'LIST'
          ? await inv.client.request(
              method,
              Object.keys(body).length ? `${path}?${new URLSearchParams(body as Record<string, string>)}` : path,
            )
          : await inv.client.request(method, path, body);
      const data = res.body?.data ?? res.body?.auth ?? null;
      if (data !== null) await inv.print(data);
      else if (res.status === 204) inv.success(`Success! Data written to: ${path}`);
    },
  };
}

/** The commands of every route in `routes` that has a cli hint (and is not skipped). */
export function routeCommands(
  routes: readonly AnyRoute[],
  opts: {
    defaultMount: string;
    skip?: (r: AnyRoute) => boolean;
    confirm?: Record<string, NonNullable<CommandSpec['confirm']>>;
  },
): CommandSpec[] {
  const seen = new Set<string>();
  const out: CommandSpec[] = [];
  for (const route of routes) {
    if (!route.cli || opts.skip?.(route) || seen.has(route.cli.command)) continue;
    seen.add(route.cli.command);
    out.push(routeCommand(route, opts.defaultMount, opts.confirm?.[route.cli.command]));
  }
  return out;
}
