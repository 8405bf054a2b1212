/** `keyhold quota read NAME`. */
import type { CommandSpec } from '../../command.js';
import { quotaPath } from './quota-path.js';

export const read: CommandSpec = {
  words: ['quota', 'read'],
  summary: 'Read a rate-limit quota',
  args: [{ name: 'name', help: 'quota name' }],
  examples: ['keyhold quota read transit-cap'],
  async run(inv) {
    const res = await inv.client.read(quotaPath(inv.args.name));
    await inv.print(res.body?.data ?? null);
  },
};
