/** `keyhold policy list`. */
import type { CommandSpec } from '../../command.js';

export const list: CommandSpec = {
  words: ['policy', 'list'],
  summary: 'List policies',
  async run(inv) {
    const res = await inv.client.list('sys/policies/acl');
    await inv.print(((res.body?.data ?? {}) as Record<string, unknown>).keys);
  },
};
