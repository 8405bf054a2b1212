/** `keyhold list PATH`: LIST any path; a Keys column like `vault list`. */
import type { CommandSpec } from '../../command.js';
import { grid } from '../../output.js';

export const list: CommandSpec = {
  words: ['list'],
  summary: 'List keys at any path (LIST)',
  args: [{ name: 'path' }],
  async run(inv) {
    const res = await inv.client.list(inv.args.path);
    const keys = ((res.body?.data as Record<string, unknown>)?.keys ?? []) as string[];
    const g = inv.globals;
    // Like `vault list`: a "Keys" column in table format; the bare array otherwise.
    // The vault face prints as the vault CLI: keys sorted under a four-dash rule.
    if (!g.field && (!g.format || g.format === 'table') && inv.face === 'vault')
      inv.io.stdout.write(
        `Keys\n----\n${[...keys]
          .sort()
          .map((k) => `${k}\n`)
          .join('')}`,
      );
    else if (!g.field && (!g.format || g.format === 'table'))
      inv.io.stdout.write(
        grid(
          ['Keys'],
          keys.map((k) => [k]),
        ),
      );
    else await inv.print(keys);
  },
};
