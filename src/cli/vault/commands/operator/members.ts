/** `vault operator members`: the nodes of an HA cluster (sys/ha-status), as the vault CLI's table. */
import type { CommandSpec } from '../../../command.js';
import { grid } from '../../../output.js';

type Node = Record<string, unknown>;

export const members: CommandSpec = {
  words: ['operator', 'members'],
  summary: 'The nodes of the HA cluster, with the active one',
  examples: ['vault operator members'],
  async run(inv) {
    const res = await inv.client.read('sys/ha-status');
    const nodes = (((res.body?.data ?? res.body) as { nodes?: Node[] } | null)?.nodes ?? []) as Node[];
    const g = inv.globals;
    if (g.field || (g.format && g.format !== 'table')) return inv.print(res.body?.data ?? res.body);
    const cell = (v: unknown) => (v === null || v === undefined || v === '' ? 'n/a' : String(v));
    const rows = nodes.map((n) => [
      cell(n.hostname),
      cell(n.api_address),
      cell(n.cluster_address),
      String(Boolean(n.active_node)),
      cell(n.version),
      cell(n.upgrade_version),
      cell(n.redundancy_zone),
      cell(n.last_echo),
    ]);
    inv.io.stdout.write(
      grid(
        [
          'Host Name',
          'API Address',
          'Cluster Address',
          'Active Node',
          'Version',
          'Upgrade Version',
          'Redundancy Zone',
          'Last Echo',
        ],
        rows,
      ),
    );
  },
};
