/** `keyhold token lookup [TOKEN|-]`: the current token, one from stdin, or one by --accessor. */
import { flag, optArg, type CommandSpec } from '../../command.js';

export const lookup: CommandSpec = {
  words: ['token', 'lookup'],
  summary: 'Look up the current token, or one given with --accessor or on stdin (-)',
  args: [optArg('token', '"-" reads a token from stdin')],
  flags: [flag('--accessor <accessor>', 'look up by accessor')],
  stdin: 'the token with "-"',
  async run(inv) {
    const t = inv.args.token as string | undefined;
    let res;
    if (inv.opts.accessor) res = await inv.client.write('auth/token/lookup-accessor', { accessor: inv.opts.accessor });
    else if (t)
      res = await inv.client.write('auth/token/lookup', {
        token: t === '-' ? (await inv.io.stdin()).toString().trim() : t,
      });
    else res = await inv.client.read('auth/token/lookup-self');
    await inv.printSecret(res.body);
  },
};
