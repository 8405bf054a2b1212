/** `keyhold secrets list`: the mounts as a table (or JSON). */
import type { CommandSpec } from '../../command.js';
import { grid } from '../../output.js';

export const list: CommandSpec = {
  words: ['secrets', 'list'],
  summary: 'List mounted engines',
  async run(inv) {
    const res = await inv.client.read('sys/mounts');
    const data = (res.body?.data ?? {}) as Record<string, Record<string, unknown>>;
    if (inv.globals.format && inv.globals.format !== 'table') return inv.print(data);
    const rows = Object.entries(data)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([p, m]) => [p, String(m.type), String(m.accessor), String(m.description ?? '')]);
    inv.io.stdout.write(grid(['Path', 'Type', 'Accessor', 'Description'], rows));
  },
};
