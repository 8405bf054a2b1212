/** `keyhold policy delete NAME` (asks first on a terminal). */
import type { CommandSpec } from '../../command.js';

export const del: CommandSpec = {
  words: ['policy', 'delete'],
  summary: 'Delete a policy',
  confirm: (a) => `Delete policy "${a[0]}"?`,
  args: [{ name: 'name' }],
  async run(inv) {
    await inv.client.delete(`sys/policies/acl/${encodeURIComponent(inv.args.name)}`);
    inv.success(`Success! Deleted policy: ${inv.args.name}`);
  },
};
