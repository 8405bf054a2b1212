/** `vault token renew [TOKEN]`: renew a token (the current one without an argument), -increment, -accessor. */
import { flag, optArg, type CommandSpec } from '../../../command.js';

export const renew: CommandSpec = {
  words: ['token', 'renew'],
  summary: 'Renew a token (the current one by default); prints its auth block',
  args: [optArg('token', 'token to renew ("-" reads it from stdin)')],
  flags: [
    flag('-i, --increment <duration>', 'requested extension of the TTL, e.g. 30m'),
    flag('--accessor', 'the argument is an accessor, not a token'),
  ],
  stdin: 'the token with "-"',
  examples: [
    'vault token renew',
    'vault token renew -increment=30m "$TOKEN"',
    'vault token renew -accessor "$ACCESSOR"',
  ],
  async run(inv) {
    const t = inv.args.token as string | undefined;
    const body: Record<string, unknown> = {};
    if (inv.opts.increment) body.increment = inv.opts.increment;
    let res;
    if (t === undefined) res = await inv.client.write('auth/token/renew-self', body);
    else {
      const v = t === '-' ? (await inv.io.stdin()).toString().trim() : t;
      res = inv.opts.accessor
        ? await inv.client.write('auth/token/renew-accessor', { ...body, accessor: v })
        : await inv.client.write('auth/token/renew', { ...body, token: v });
    }
    await inv.printSecret(res.body, res.body?.auth);
  },
};
