/** `keyhold quota delete NAME`. */
import type { CommandSpec } from '../../command.js';
import { quotaPath } from './quota-path.js';

export const del: CommandSpec = {
  words: ['quota', 'delete'],
  summary: 'Delete a rate-limit quota',
  args: [{ name: 'name', help: 'quota name' }],
  examples: ['keyhold quota delete transit-cap'],
  async run(inv) {
    const path = quotaPath(inv.args.name);
    await inv.client.delete(path);
    inv.success(`Success! Data deleted (if it existed) at: ${path}`);
  },
};
