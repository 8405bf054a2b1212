/** `keyhold transit keys read NAME`. */
import { flag, type CommandSpec } from '../../../command.js';
import { MOUNT, mountOf } from '../io.js';
import { enc } from './output.js';

export const read: CommandSpec = {
  words: ['transit', 'keys', 'read'],
  summary: 'Show a key: type, versions (public keys for asymmetric types), settings',
  args: [{ name: 'name', help: 'key name' }],
  flags: [MOUNT, flag('--context <base64>', 'context to show derived Ed25519 public keys')],
  async run(inv) {
    const ctxParam = inv.opts.context as string | undefined;
    const res = await inv.client.request(
      'GET',
      `${mountOf(inv)}/keys/${enc(inv.args.name)}${ctxParam ? `?context=${enc(ctxParam)}` : ''}`,
    );
    await inv.print(res.body?.data ?? null);
  },
};
