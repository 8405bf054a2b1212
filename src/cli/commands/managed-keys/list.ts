/** `keyhold managed-keys list TYPE`. */
import type { CommandSpec } from '../../command.js';
import { grid } from '../../output.js';
import { TYPE_ARG, enc, typeArg } from './type.js';

export const list: CommandSpec = {
  words: ['managed-keys', 'list'],
  summary: 'List the managed keys of one type',
  args: [TYPE_ARG],
  async run(inv) {
    const type = inv.args.type as string;
    const res = await inv.client.request('LIST', `sys/managed-keys/${enc(typeArg(type))}`, undefined, {
      allowStatus: [404],
    });
    const keys = ((res.body?.data as { keys?: string[] } | undefined)?.keys ?? []) as string[];
    const g = inv.globals;
    if (g.field || (g.format && g.format !== 'table')) return inv.print({ keys });
    if (!keys.length) {
      inv.io.stderr.write(`No ${type} managed keys.\n`);
      return;
    }
    inv.io.stdout.write(
      grid(
        ['Keys'],
        keys.map((k) => [k]),
      ),
    );
  },
};
