/** `keyhold quota list`: every rate-limit quota with its path, role, rate and intervals. */
import type { CommandSpec } from '../../command.js';
import { grid } from '../../output.js';
import { QUOTA_BASE, quotaPath } from './quota-path.js';

export const list: CommandSpec = {
  words: ['quota', 'list'],
  summary: 'List rate-limit quotas with their path and rate',
  examples: ['keyhold quota list', 'keyhold quota list --format=json'],
  async run(inv) {
    const res = await inv.client.request('LIST', QUOTA_BASE, undefined, { allowStatus: [404] });
    const data = (res.body?.data ?? {}) as { keys?: string[] };
    const names = (res.status === 404 ? [] : (data.keys ?? [])).slice().sort();
    const g = inv.globals;
    if (g.field || (g.format && g.format !== 'table')) return inv.print(names);
    if (names.length === 0) {
      inv.io.stderr.write('No rate-limit quotas.\n');
      return;
    }
    const rows: string[][] = [];
    for (const n of names) {
      const q = ((await inv.client.read(quotaPath(n))).body?.data ?? {}) as Record<string, unknown>;
      rows.push([
        n,
        q.path === '' ? '(global)' : String(q.path),
        q.role ? String(q.role) : '',
        String(q.rate),
        `${q.interval}s`,
        q.block_interval ? `${q.block_interval}s` : '',
      ]);
    }
    inv.io.stdout.write(grid(['Name', 'Path', 'Role', 'Rate', 'Interval', 'Block'], rows));
  },
};
