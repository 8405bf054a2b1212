/** `keyhold operator unseal [KEY]`: key shares typed on a TTY, or on stdin one per line, or @file. */
import { flag, optArg, type CommandSpec } from '../../command.js';
import type { ApiResponse } from '../../client.js';
import { LocalError } from '../../errors.js';
import { readShares } from './shares.js';

export const unseal: CommandSpec = {
  words: ['operator', 'unseal'],
  summary:
    'Give unseal key shares (recovery shares under an auto seal): one typed on a TTY, or one or more on stdin, one per line',
  args: [optArg('key', '"-" (stdin, the default) or @file; never the key itself')],
  flags: [
    flag('--reset', 'forget the shares given so far'),
    flag('--migrate', 'the shares belong to the seal being migrated away from (seal migration)'),
  ],
  stdin: 'key shares, one per line',
  examples: [
    'keyhold operator unseal                 # prompts for one share',
    'keyhold operator unseal < shares.txt    # several shares, one per line',
    'keyhold operator unseal @share.txt',
    'keyhold operator unseal -migrate < recovery-shares.txt',
  ],
  async run(inv) {
    const client = inv.client;
    if (inv.opts.reset) {
      const res = await client.request('POST', 'sys/unseal', { reset: true });
      await inv.print(res.body);
      return;
    }
    const keys = await readShares(inv, inv.args.key, 'Unseal Key (will be hidden): ');
    if (!keys.length) throw new LocalError('give an unseal key share on stdin (one per line)');
    let res: ApiResponse | undefined;
    for (const key of keys) {
      res = await client.request('POST', 'sys/unseal', inv.opts.migrate ? { key, migrate: true } : { key });
      if (res.body?.sealed === false) break;
    }
    await inv.print(res!.body);
  },
};
