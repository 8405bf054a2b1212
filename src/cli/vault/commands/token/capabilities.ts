/**
 * `vault token capabilities [TOKEN] PATH`: what a token may do on a path (the current token with one
 * argument; -accessor for an accessor). Prints `create, read, ...` (sorted), or a JSON array.
 */
import { flag, optArg, type CommandSpec } from '../../../command.js';
import { LocalError } from '../../../errors.js';

export const capabilities: CommandSpec = {
  words: ['token', 'capabilities'],
  summary: "A token's capabilities on a path (the current token when only PATH is given)",
  args: [{ name: 'first', help: 'TOKEN (or PATH alone)' }, optArg('path', 'PATH')],
  flags: [flag('--accessor', 'the first argument is an accessor')],
  examples: ['vault token capabilities secret/data/app', 'vault token capabilities "$TOKEN" transit/encrypt/app'],
  async run(inv) {
    const first = inv.args.first as string;
    const second = inv.args.path as string | undefined;
    const path = (second ?? first).replace(/^\/+/, '');
    let res;
    if (second === undefined) {
      if (inv.opts.accessor) throw new LocalError('-accessor needs ACCESSOR and PATH');
      res = await inv.client.write('sys/capabilities-self', { paths: [path] });
    } else if (inv.opts.accessor)
      res = await inv.client.write('sys/capabilities-accessor', { accessor: first, paths: [path] });
    else res = await inv.client.write('sys/capabilities', { token: first, paths: [path] });
    const d = (res.body?.data ?? res.body ?? {}) as Record<string, unknown>;
    const caps = [...(((d[path] ?? d.capabilities) as string[] | undefined) ?? [])].sort();
    const g = inv.globals;
    if (g.format && g.format !== 'table') await inv.print(caps);
    else inv.io.stdout.write(caps.join(', ') + '\n');
  },
};
