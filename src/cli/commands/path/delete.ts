/** `keyhold delete PATH [k=v...]`: DELETE any path. */
import { optArg, type CommandSpec } from '../../command.js';

export const del: CommandSpec = {
  words: ['delete'],
  summary: 'Delete any path (DELETE)',
  args: [{ name: 'path' }, optArg('pairs', 'query parameters k=v', { variadic: true })],
  async run(inv) {
    const q = await inv.parsePairs(inv.args.pairs);
    await inv.client.delete(inv.args.path, q as Record<string, string>);
    inv.success(`Success! Data deleted (if it existed) at: ${inv.args.path}`);
  },
};
