/** `keyhold audit list [--detailed]`. */
import { flag, type CommandSpec } from '../../command.js';
import { grid } from '../../output.js';

export const list: CommandSpec = {
  words: ['audit', 'list'],
  summary: 'List enabled audit devices',
  flags: [flag('--detailed', 'also show options')],
  async run(inv) {
    const res = await inv.client.read('sys/audit');
    const data = (res.body?.data ?? {}) as Record<
      string,
      { type: string; description: string; options: Record<string, string> }
    >;
    const g = inv.globals;
    if (g.field || (g.format && g.format !== 'table')) return inv.print(data);
    const entries = Object.entries(data).sort(([a], [b]) => a.localeCompare(b));
    if (entries.length === 0) {
      inv.io.stderr.write('No audit devices are enabled.\n');
      return;
    }
    const detailed = Boolean(inv.opts.detailed || inv.globals.detailed);
    const headers = detailed ? ['Path', 'Type', 'Description', 'Options'] : ['Path', 'Type', 'Description'];
    const rows = entries.map(([p, d]) => {
      const row = [p, d.type, d.description ?? ''];
      if (detailed)
        row.push(
          Object.entries(d.options ?? {})
            .map(([k, v]) => `${k}=${v}`)
            .join(' '),
        );
      return row;
    });
    inv.io.stdout.write(grid(headers, rows));
  },
};
