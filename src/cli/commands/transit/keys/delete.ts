/** `keyhold transit keys delete NAME` (asks first on a terminal: src/cli/confirmations.ts). */
import type { CommandSpec } from '../../../command.js';
import { MOUNT, mountOf } from '../io.js';
import { enc } from './output.js';

export const del: CommandSpec = {
  words: ['transit', 'keys', 'delete'],
  summary: 'Delete a key and all its versions (needs deletion_allowed; data encrypted with it is lost)',
  confirm: (a) => `Delete transit key "${a[0]}"? Data encrypted with it can no longer be decrypted.`,
  args: [{ name: 'name', help: 'key name' }],
  flags: [MOUNT],
  async run(inv) {
    await inv.client.request('DELETE', `${mountOf(inv)}/keys/${enc(inv.args.name)}`);
    inv.success(`Success! Deleted key ${inv.args.name}`);
  },
};
