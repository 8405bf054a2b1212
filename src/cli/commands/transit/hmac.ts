/** `keyhold transit hmac NAME`: HMAC of stdin (or --file). */
import type { CommandSpec } from '../../command.js';
import { bodyOf, fieldFlag } from '../../route-flags.js';
import { INPUT, MOUNT, dataOf, inputBase64, intOpt, mountOf, seg } from './io.js';
import { HMAC } from './routes.js';

const fields = [fieldFlag(HMAC, 'algorithm', { value: 'alg' }), fieldFlag(HMAC, 'key_version', { parse: intOpt })];

export const hmac: CommandSpec = {
  words: ['transit', 'hmac'],
  summary: 'HMAC of stdin (or --file) with a key (--field hmac for only the value)',
  args: [{ name: 'name', help: 'key name' }],
  flags: [MOUNT, ...INPUT, ...fields],
  stdin: 'the bytes to authenticate (unless --file)',
  async run(inv) {
    const body: Record<string, unknown> = { input: await inputBase64(inv), ...bodyOf(fields, inv.opts) };
    const res = await inv.client.write(`${mountOf(inv)}/hmac/${seg(inv.args.name)}`, body);
    await inv.print(dataOf(res));
  },
};
