/** `keyhold sync assoc list [TYPE NAME]`: one destination's associations (with status), or every associated secret. */
import { optArg, type CommandSpec } from '../../../command.js';
import { LocalError } from '../../../errors.js';
import { grid } from '../../../output.js';
import { destPath, listOrEmpty, printRows, rowsOf, typeArg, wantsTable } from '../views.js';

export const list: CommandSpec = {
  words: ['sync', 'assoc', 'list'],
  summary: 'List associations: of one destination (with status), or every associated secret',
  args: [optArg('type', 'destination type'), optArg('name', 'destination name')],
  async run(inv) {
    const { type, name } = inv.args as { type?: string; name?: string };
    if (type) {
      if (!name) throw new LocalError('give both <type> and <name>, or neither');
      const r = await inv.client.read(destPath(typeArg(type), name, '/associations'));
      const data = (r.body?.data ?? {}) as Record<string, unknown>;
      return wantsTable(inv) ? printRows(inv, rowsOf(type, name, data)) : inv.print(data);
    }
    const data = await listOrEmpty(inv.client, 'sys/sync/associations');
    if (!wantsTable(inv)) return inv.print(data);
    const info = (data.key_info ?? {}) as Record<string, Array<{ type?: string; name?: string }>>;
    const rows = ((data.keys as string[]) ?? []).map((k) => [
      k,
      (info[k] ?? []).map((d) => `${d.type}/${d.name}`).join(', '),
    ]);
    if (rows.length === 0) inv.io.stderr.write('No associations.\n');
    else inv.io.stdout.write(grid(['SECRET', 'DESTINATIONS'], rows));
  },
};
