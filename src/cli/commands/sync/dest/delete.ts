/** `keyhold sync dest delete TYPE NAME [--purge|--force]` (asks first on a terminal). */
import { flag, type CommandSpec } from '../../../command.js';
import { destPath, printDestination, typeArg } from '../views.js';

export const del: CommandSpec = {
  words: ['sync', 'dest', 'delete'],
  summary: 'Delete a destination (refused while it has associations unless --purge or --force)',
  confirm: (a) => `Delete sync destination ${a.join('/')}?`,
  args: [
    { name: 'type', help: 'destination type' },
    { name: 'name', help: 'destination name' },
  ],
  flags: [
    flag('--purge', 'unsync every associated secret, remove the associations, then delete (asynchronous)'),
    flag('--force', 'delete at once even with associations; external secrets are left behind'),
  ],
  async run(inv) {
    const { type, name } = inv.args as { type: string; name: string };
    const q: Record<string, string> = {};
    if (inv.opts.purge) q.purge = 'true';
    if (inv.opts.force) q.force_delete = 'true';
    const r = await inv.client.delete(destPath(typeArg(type), name), q);
    if (r.status === 200 && r.body?.data) {
      inv.io.stderr.write(`Purge of ${type}/${name} started; it is deleted once every secret is unsynced.\n`);
      await printDestination(inv, r.body.data as Record<string, unknown>);
    } else inv.success(`Success! Deleted destination ${type}/${name}.`);
  },
};
