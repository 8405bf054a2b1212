/** `keyhold kv metadata delete PATH`: every version and the metadata (asks first on a terminal). */
import type { CommandSpec } from '../../../command.js';
import { apiPath, secretTarget, shownPath } from '../target.js';
import { MOUNT } from '../write.js';

export const del: CommandSpec = {
  words: ['kv', 'metadata', 'delete'],
  summary: 'Delete a secret entirely: all versions and its metadata',
  confirm: (a) => `Delete "${a[0]}" with all of its versions and metadata?`,
  args: [{ name: 'path', help: 'secret path' }],
  flags: [MOUNT],
  async run(inv) {
    const t = await secretTarget(inv.client, inv.args.path, inv.opts.mount);
    await inv.client.request('DELETE', apiPath(t, 'metadata'));
    inv.success(`Success! Data deleted (if it existed) at: ${shownPath(t, 'metadata')}`);
  },
};
