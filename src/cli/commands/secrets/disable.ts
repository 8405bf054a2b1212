/** `keyhold secrets disable PATH` (asks first on a terminal). */
import { flag, type CommandSpec } from '../../command.js';

export const disable: CommandSpec = {
  words: ['secrets', 'disable'],
  summary: 'Unmount an engine and delete its data',
  confirm: (a) => `Disable the engine at "${a[0]}" and delete all of its data?`,
  args: [{ name: 'path' }],
  flags: [flag('-y, --yes', 'do not ask for confirmation')],
  async run(inv) {
    const path = inv.args.path as string;
    await inv.client.delete(`sys/mounts/${path.replace(/^\/+|\/+$/g, '')}`);
    inv.success(`Success! Disabled the secrets engine (if it existed) at: ${path}`);
  },
};
