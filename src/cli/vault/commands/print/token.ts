/** `vault print token`: the token this CLI would send (flag, VAULT_TOKEN, or the one `vault login` saved). */
import type { CommandSpec } from '../../../command.js';

export const printToken: CommandSpec = {
  words: ['print', 'token'],
  summary: 'Print the token in use',
  examples: ['vault print token'],
  run(inv) {
    inv.io.stdout.write(`${inv.client.token ?? ''}\n`);
  },
};
