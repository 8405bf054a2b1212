/** `keyhold write PATH [k=v...]`: POST to any path; values may be @file or - (stdin). */
import { flag, optArg, type CommandSpec } from '../../command.js';

export const write: CommandSpec = {
  words: ['write'],
  summary: 'Write to any path (POST); values as k=v, k=@file, k=- (stdin)',
  args: [{ name: 'path' }, optArg('pairs', 'k=v pairs', { variadic: true })],
  flags: [flag('-f, --force', 'write with no data')],
  async run(inv) {
    const body = await inv.parsePairs(inv.args.pairs);
    const res = await inv.client.write(inv.args.path, body);
    const data = res.body?.data ?? res.body?.auth;
    // As `vault write`: an answer prints per -format (json: the whole envelope) and -field (auth fields too).
    if (data || (res.body && (inv.globals.field || (inv.globals.format && inv.globals.format !== 'table'))))
      await inv.printSecret(res.body, data);
    // vault says so in table format only: `-format=json` output stays parseable (nothing at all).
    else if (!inv.globals.format || inv.globals.format === 'table')
      inv.success(`Success! Data written to: ${inv.args.path}`);
  },
};
