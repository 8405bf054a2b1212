/** `vault version`: the program's version line. */
import type { CommandSpec } from '../../../command.js';
import { VERSION } from '../../../../version.js';

export const version: CommandSpec = {
  words: ['version'],
  summary: 'Print the version',
  run(inv) {
    inv.io.stdout.write(`Vault v${VERSION} (keyhold)\n`);
  },
};
