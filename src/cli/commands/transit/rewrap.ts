/** `keyhold transit rewrap NAME [CIPHERTEXT]`: re-encrypt with the latest key version. */
import { optArg, type CommandSpec } from '../../command.js';
import { bodyOf, fieldFlag } from '../../route-flags.js';
import { MOUNT, argOrStdin, dataOf, intOpt, mountOf, seg } from './io.js';
import { REWRAP } from './routes.js';

const fields = [fieldFlag(REWRAP, 'context'), fieldFlag(REWRAP, 'key_version', { parse: intOpt })];

export const rewrap: CommandSpec = {
  words: ['transit', 'rewrap'],
  summary: 'Re-encrypt a ciphertext (argument or stdin) with the latest key version; never returns plaintext',
  args: [
    { name: 'name', help: 'key name' },
    optArg('ciphertext', 'vault:vN:... ciphertext (default: read from stdin)'),
  ],
  flags: [MOUNT, ...fields],
  stdin: 'the ciphertext when not given as an argument',
  async run(inv) {
    const body: Record<string, unknown> = {
      ciphertext: await argOrStdin(inv, inv.args.ciphertext, 'ciphertext'),
      ...bodyOf(fields, inv.opts),
    };
    const res = await inv.client.write(`${mountOf(inv)}/rewrap/${seg(inv.args.name)}`, body);
    await inv.print(dataOf(res));
  },
};
