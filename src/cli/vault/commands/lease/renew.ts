/** `vault lease renew [-increment=DURATION] ID`: renew a lease (sys/leases/renew). keyhold issues none: exit 2. */
import { flag, type CommandSpec } from '../../../command.js';

export const renew: CommandSpec = {
  words: ['lease', 'renew'],
  summary: 'Renew a lease by id (keyhold issues no leases)',
  args: [{ name: 'id', help: 'lease id' }],
  flags: [flag('-i, --increment <duration>', 'requested extension, e.g. 1h')],
  examples: ['vault lease renew -increment=1h database/creds/readonly/2f6a614c'],
  async run(inv) {
    const body: Record<string, unknown> = { lease_id: inv.args.id };
    if (inv.opts.increment) body.increment = inv.opts.increment;
    const res = await inv.client.write('sys/leases/renew', body);
    await inv.printSecret(res.body);
  },
};
