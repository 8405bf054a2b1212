/** `keyhold kv undelete|destroy PATH --versions LIST`: restore soft-deleted versions, or remove their data for good. */
import { flag, type CommandSpec } from '../../command.js';
import { versionsOf } from './render.js';
import { apiPath, needV2, secretTarget, shownPath } from './target.js';
import { MOUNT } from './write.js';

function versionCommand(word: 'undelete' | 'destroy', summary: string, confirm?: CommandSpec['confirm']): CommandSpec {
  return {
    words: ['kv', word],
    summary,
    confirm,
    args: [{ name: 'path', help: 'secret path' }],
    flags: [flag('--versions <list>', 'comma-separated versions', { required: true }), MOUNT],
    async run(inv) {
      const t = await secretTarget(inv.client, inv.args.path, inv.opts.mount);
      needV2(t, `kv ${word}`);
      await inv.client.request('POST', apiPath(t, word), { versions: versionsOf(inv.opts.versions, true) });
      inv.success(`Success! Data written to: ${shownPath(t, word)}`);
    },
  };
}

export const undelete = versionCommand('undelete', 'Restore soft-deleted versions');
export const destroy = versionCommand(
  'destroy',
  'Permanently remove the data of versions (cannot be undone)',
  (a) => `Permanently destroy the given versions of "${a[0]}"?`,
);
