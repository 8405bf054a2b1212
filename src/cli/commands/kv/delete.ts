/** `keyhold kv delete PATH [--versions]`: soft-delete (undo with kv undelete). */
import { flag, type CommandSpec } from '../../command.js';
import { versionsOf } from './render.js';
import { apiPath, needV2, secretTarget, shownPath } from './target.js';
import { MOUNT } from './write.js';

export const del: CommandSpec = {
  words: ['kv', 'delete'],
  summary: 'Soft-delete the current version, or --versions (undo with kv undelete)',
  args: [{ name: 'path', help: 'secret path' }],
  flags: [flag('--versions <list>', 'comma-separated versions to delete instead of the current one'), MOUNT],
  async run(inv) {
    const t = await secretTarget(inv.client, inv.args.path, inv.opts.mount);
    const versions = versionsOf(inv.opts.versions, false);
    if (versions) needV2(t, 'kv delete --versions');
    if (versions) await inv.client.request('POST', apiPath(t, 'delete'), { versions });
    else await inv.client.request('DELETE', apiPath(t, 'data'));
    inv.success(`Success! Data deleted (if it existed) at: ${shownPath(t, versions ? 'delete' : 'data')}`);
  },
};
