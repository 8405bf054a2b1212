/** `vault patch PATH k=v...`: a JSON merge patch of any path (PATCH, application/merge-patch+json). */
import { optArg, type CommandSpec } from '../../../command.js';

export const patch: CommandSpec = {
  words: ['patch'],
  summary: 'Patch data at any path (JSON merge patch); values as k=v, k=@file, k=- (stdin), or - for a JSON body',
  args: [{ name: 'path' }, optArg('pairs', 'k=v pairs, or - (a JSON object on stdin)', { variadic: true })],
  examples: [
    'vault patch secret/data/app data=\'{"pass":"new"}\'',
    'vault patch transit/keys/app/config deletion_allowed=true',
  ],
  async run(inv) {
    const body = await inv.parsePairs(inv.args.pairs ?? []);
    const res = await inv.client.request('PATCH', inv.args.path, body, {
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    if (
      res.body &&
      (res.body.data || res.body.auth || inv.globals.field || (inv.globals.format && inv.globals.format !== 'table'))
    )
      await inv.printSecret(res.body);
    else inv.success(`Success! Data written to: ${inv.args.path}`);
  },
};
