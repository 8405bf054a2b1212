/** `keyhold unwrap [TOKEN]`: read a response-wrapping token's answer, once (as `vault unwrap`). */
import { optArg, type CommandSpec } from '../../command.js';

export const unwrap: CommandSpec = {
  words: ['unwrap'],
  summary: 'Unwrap a response-wrapping token (TOKEN, - for stdin, @file; default: the current token); works once',
  args: [optArg('token', 'wrapping token, - (stdin) or @file; without it the client token is the wrapping token')],
  stdin: 'the wrapping token with "-"',
  async run(inv) {
    const client = inv.client;
    const token = inv.args.token as string | undefined;
    const t = token === undefined ? undefined : (await inv.valueOf(token)).trim();
    const res = await client.request('POST', 'sys/wrapping/unwrap', t ? { token: t } : {});
    const b = res.body as { data?: unknown; auth?: unknown } | undefined;
    await inv.printSecret(b, b?.data ?? b?.auth ?? b);
  },
};
