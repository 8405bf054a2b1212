/** `keyhold transit sign NAME`: signature of stdin (or --file). */
import type { CommandSpec } from '../../command.js';
import { bodyOf, fieldFlag } from '../../route-flags.js';
import { INPUT, MOUNT, dataOf, inputBase64, intOpt, mountOf, seg } from './io.js';
import { SIGN } from './routes.js';
import { signatureFlags } from './signature.js';

const fields = [...signatureFlags(SIGN), fieldFlag(SIGN, 'key_version', { parse: intOpt })];

export const sign: CommandSpec = {
  words: ['transit', 'sign'],
  summary: 'Sign stdin (or --file) with an asymmetric key (--field signature for only the value)',
  args: [{ name: 'name', help: 'key name' }],
  flags: [MOUNT, ...INPUT, ...fields],
  stdin: 'the bytes to sign (unless --file)',
  async run(inv) {
    const body: Record<string, unknown> = { input: await inputBase64(inv), ...bodyOf(fields, inv.opts) };
    const res = await inv.client.write(`${mountOf(inv)}/sign/${seg(inv.args.name)}`, body);
    await inv.print(dataOf(res));
  },
};
