/** `keyhold managed-keys read TYPE NAME` (secrets show as "redacted"). */
import type { CommandSpec } from '../../command.js';
import { NAME_ARG, TYPE_ARG, enc, typeArg } from './type.js';

export const read: CommandSpec = {
  words: ['managed-keys', 'read'],
  summary: 'Read a managed key (the PIN and AWS secrets show as "redacted")',
  args: [TYPE_ARG, NAME_ARG],
  async run(inv) {
    const res = await inv.client.read(`sys/managed-keys/${enc(typeArg(inv.args.type))}/${enc(inv.args.name)}`);
    await inv.print(res.body?.data ?? {});
  },
};
