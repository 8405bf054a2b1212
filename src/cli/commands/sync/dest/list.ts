/** `keyhold sync dest list [TYPE]`. */
import { optArg, type CommandSpec } from '../../../command.js';
import { grid } from '../../../output.js';
import { listOrEmpty, typeArg, wantsTable } from '../views.js';

export const list: CommandSpec = {
  words: ['sync', 'dest', 'list'],
  summary: 'List destinations (all types, or one)',
  args: [optArg('type', 'only this type')],
  async run(inv) {
    const type = inv.args.type as string | undefined;
    if (type) {
      const data = await listOrEmpty(inv.client, `sys/sync/destinations/${encodeURIComponent(typeArg(type))}`);
      return inv.print(wantsTable(inv) ? ((data.keys as string[]) ?? []) : data);
    }
    const data = await listOrEmpty(inv.client, 'sys/sync/destinations');
    if (!wantsTable(inv)) return inv.print(data);
    const info = (data.key_info ?? {}) as Record<string, string[]>;
    const rows = Object.keys(info)
      .sort()
      .flatMap((k) => info[k]!.map((n) => [k.replace(/\/$/, ''), n]));
    if (rows.length === 0) inv.io.stderr.write('No destinations.\n');
    else inv.io.stdout.write(grid(['TYPE', 'NAME'], rows));
  },
};
