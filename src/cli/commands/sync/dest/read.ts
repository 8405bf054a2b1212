/** `keyhold sync dest read TYPE NAME` (sensitive values masked). */
import type { CommandSpec } from '../../../command.js';
import { destPath, printDestination, typeArg } from '../views.js';

export const read: CommandSpec = {
  words: ['sync', 'dest', 'read'],
  summary: 'Show a destination (sensitive values masked as *****)',
  args: [
    { name: 'type', help: 'destination type' },
    { name: 'name', help: 'destination name' },
  ],
  async run(inv) {
    const r = await inv.client.read(destPath(typeArg(inv.args.type), inv.args.name));
    await printDestination(inv, (r.body?.data ?? {}) as Record<string, unknown>);
  },
};
