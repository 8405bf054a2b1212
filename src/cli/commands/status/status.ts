/** `keyhold status`: seal status, version, storage and HA role; exit 2 when sealed. */
import type { CommandSpec } from '../../command.js';

export const status: CommandSpec = {
  words: ['status'],
  summary: 'Seal status, version and storage of the daemon',
  async run(inv) {
    const client = inv.client;
    const res = await client.request('GET', 'sys/seal-status');
    const body = { ...(res.body ?? {}) } as Record<string, unknown>;
    // HA fields as `vault status` shows them (from sys/leader; a sealed node answers 503 there).
    if (!body.sealed) {
      const leader = (await client.request('GET', 'sys/leader').catch(() => null))?.body as
        | Record<string, unknown>
        | undefined;
      body.ha_enabled = leader?.ha_enabled === true;
      if (leader?.ha_enabled) {
        body.ha_cluster = leader.leader_cluster_address || 'n/a';
        body.ha_mode = leader.is_self ? 'active' : 'standby';
        if (leader.is_self) body.active_since = leader.active_time;
        body.active_node_address = leader.leader_address || '<none>';
      }
    }
    await inv.print(body);
    return res.body?.sealed ? 2 : 0;
  },
};
