/** `keyhold transit datakey plaintext|wrapped NAME`: a new data key. */
import type { CommandSpec } from '../../command.js';
import { bodyOf, fieldFlag } from '../../route-flags.js';
import { MOUNT, dataOf, intOpt, mountOf, seg } from './io.js';
import { DATAKEY } from './routes.js';

const fields = [
  fieldFlag(DATAKEY, 'bits', { parse: intOpt }),
  fieldFlag(DATAKEY, 'context'),
  fieldFlag(DATAKEY, 'key_version', { parse: intOpt }),
];

export const datakey: CommandSpec = {
  words: ['transit', 'datakey'],
  summary: 'Generate a data key: "wrapped" (ciphertext only) or "plaintext" (ciphertext and key)',
  args: [
    { name: 'type', help: 'plaintext or wrapped' },
    { name: 'name', help: 'key name' },
  ],
  flags: [MOUNT, ...fields],
  async run(inv) {
    const res = await inv.client.write(
      `${mountOf(inv)}/datakey/${seg(inv.args.type)}/${seg(inv.args.name)}`,
      bodyOf(fields, inv.opts),
    );
    await inv.print(dataOf(res));
  },
};
