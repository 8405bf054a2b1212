/** `vault lease lookup ID`: a lease's details (sys/leases/lookup). keyhold issues no leases: every id is unknown (exit 2). */
import type { CommandSpec } from '../../../command.js';

export const lookup: CommandSpec = {
  words: ['lease', 'lookup'],
  summary: 'Look up a lease by id (keyhold issues no leases)',
  args: [{ name: 'id', help: 'lease id' }],
  examples: ['vault lease lookup database/creds/readonly/2f6a614c'],
  async run(inv) {
    const res = await inv.client.write('sys/leases/lookup', { lease_id: inv.args.id });
    await inv.printSecret(res.body);
  },
};
