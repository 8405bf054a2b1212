/** `keyhold read PATH [k=v...]`: GET any path. */
import { optArg, type CommandSpec } from '../../command.js';

export const read: CommandSpec = {
  words: ['read'],
  summary: 'Read any path (GET)',
  args: [{ name: 'path' }, optArg('pairs', 'query parameters k=v', { variadic: true })],
  async run(inv) {
    const q = await inv.parsePairs(inv.args.pairs);
    const res = await inv.client.read(inv.args.path, q as Record<string, string>);
    // json/yaml: the whole envelope, as `vault read`; --field also reads auth and wrap_info fields.
    await inv.printSecret(res.body);
  },
};
