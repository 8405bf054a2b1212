/** `keyhold token revoke [TOKEN|-]`, `--accessor`, `--self` (asks first on a terminal). */
import { flag, optArg, type CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';

export const revoke: CommandSpec = {
  words: ['token', 'revoke'],
  summary: 'Revoke a token (stdin with "-"), by --accessor, or the current one with --self',
  confirm: () => 'Revoke the token and the tokens created with it?',
  args: [optArg('token')],
  flags: [flag('--accessor <accessor>', 'revoke by accessor'), flag('--self', 'revoke the calling token')],
  stdin: 'the token with "-"',
  async run(inv) {
    const t = inv.args.token as string | undefined;
    const client = inv.client;
    if (inv.opts.self) await client.write('auth/token/revoke-self', {});
    else if (inv.opts.accessor) await client.write('auth/token/revoke-accessor', { accessor: inv.opts.accessor });
    else if (t)
      await client.write('auth/token/revoke', { token: t === '-' ? (await inv.io.stdin()).toString().trim() : t });
    else throw new LocalError('give a token ("-" for stdin), --accessor or --self');
    inv.success('Success! Revoked token (if it existed)');
  },
};
