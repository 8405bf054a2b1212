/**
 * `vault operator unseal [KEY]`: the key share as an argument, as the vault CLI takes it (with a
 * warning: it shows in ps and the shell history), or typed/piped as keyhold takes it. Prints the seal
 * status table; -reset forgets the shares given so far.
 */
import { flag, optArg, type CommandSpec } from '../../../command.js';
import { LocalError } from '../../../errors.js';
import { readShares } from '../../../commands/operator/shares.js';
import { sealStatusTable } from '../../seal-status.js';

export const unseal: CommandSpec = {
  words: ['operator', 'unseal'],
  summary: 'Give an unseal key share (argument, typed on a terminal, or piped one per line)',
  args: [optArg('key', 'the key share (shows in ps and the shell history: prefer stdin), "-" or @file')],
  flags: [
    flag('--reset', 'forget the shares given so far'),
    flag('--migrate', 'the share belongs to the seal being migrated away from'),
  ],
  stdin: 'key shares, one per line',
  examples: ['vault operator unseal "$KEY"', 'vault operator unseal          # prompts for the key'],
  async run(inv) {
    const client = inv.client;
    let body: Record<string, unknown>;
    if (inv.opts.reset)
      body = ((await client.request('POST', 'sys/unseal', { reset: true })).body ?? {}) as Record<string, unknown>;
    else {
      // A share on argv is taken with a warning (readShares, in this face).
      const keys = await readShares(inv, inv.args.key as string | undefined, 'Unseal Key (will be hidden): ');
      if (!keys.length) throw new LocalError('give an unseal key share');
      body = {};
      for (const key of keys) {
        body = ((await client.request('POST', 'sys/unseal', inv.opts.migrate ? { key, migrate: true } : { key }))
          .body ?? {}) as Record<string, unknown>;
        if (body.sealed === false) break;
      }
    }
    const g = inv.globals;
    if (g.field || (g.format && g.format !== 'table')) await inv.print({ ...body, ha_enabled: false });
    else inv.io.stdout.write(sealStatusTable(body));
  },
};
