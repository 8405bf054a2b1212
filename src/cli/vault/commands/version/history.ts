/** `vault version-history`: the versions the server's storage has run under (LIST sys/version-history). */
import type { CommandSpec } from '../../../command.js';
import { grid } from '../../../output.js';

export const versionHistory: CommandSpec = {
  words: ['version-history'],
  summary: 'Versions the server has run under, with when each was installed',
  examples: ['vault version-history', 'vault version-history -format=json'],
  async run(inv) {
    const res = await inv.client.list('sys/version-history');
    const d = (res.body?.data ?? {}) as {
      keys?: string[];
      key_info?: Record<string, { timestamp_installed?: string; build_date?: string }>;
    };
    const g = inv.globals;
    if (g.field || (g.format && g.format !== 'table')) return inv.print(d);
    const rows = (d.keys ?? []).map((v) => [
      v,
      String(d.key_info?.[v]?.timestamp_installed ?? ''),
      String(d.key_info?.[v]?.build_date ?? ''),
    ]);
    inv.io.stdout.write(grid(['Version', 'Installation Time', 'Build Date'], rows));
  },
};
