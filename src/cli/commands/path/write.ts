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
    if (data) await inv.print(data);
    else inv.success(`Success! Data written to: ${inv.args.path}`);
  },
};
