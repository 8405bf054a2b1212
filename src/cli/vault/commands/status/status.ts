/** `vault status`: the seal status table (or JSON with ha_enabled); exit 2 when sealed, 1 on an error. */
import type { CommandSpec } from '../../../command.js';
import { sealStatusTable } from '../../seal-status.js';

export const status: CommandSpec = {
  words: ['status'],
  summary: 'Seal status, version and storage of the server (exit 2 when sealed)',
  async run(inv) {
    const client = inv.client;
    const res = await client.request('GET', 'sys/seal-status');
    const s = (res.body ?? {}) as Record<string, unknown>;
    const leader = s.sealed
      ? undefined
      : ((await client.request('GET', 'sys/leader').catch(() => null))?.body as Record<string, unknown> | undefined);
    const g = inv.globals;
    if (g.field || (g.format && g.format !== 'table')) {
      const out: Record<string, unknown> = { ...s, ha_enabled: leader?.ha_enabled === true };
      if (leader?.ha_enabled)
        Object.assign(out, {
          is_self: leader.is_self,
          active_time: leader.active_time,
          leader_address: leader.leader_address,
          leader_cluster_address: leader.leader_cluster_address,
        });
      await inv.print(out);
    } else inv.io.stdout.write(sealStatusTable(s, leader));
    return s.sealed ? 2 : 0;
  },
};
