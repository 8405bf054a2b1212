/** `keyhold managed-keys delete TYPE NAME`. */
import type { CommandSpec } from '../../command.js';
import { NAME_ARG, TYPE_ARG, enc, typeArg } from './type.js';

export const del: CommandSpec = {
  words: ['managed-keys', 'delete'],
  summary: 'Delete a managed key (refused while a mount lists it or a transit key uses it)',
  args: [TYPE_ARG, NAME_ARG],
  async run(inv) {
    const { type, name } = inv.args as { type: string; name: string };
    await inv.client.delete(`sys/managed-keys/${enc(typeArg(type))}/${enc(name)}`);
    inv.success(`Success! Managed key ${name} (${type}) deleted.`);
  },
};
