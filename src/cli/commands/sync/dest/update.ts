/** `keyhold sync dest update TYPE NAME`: change fields (JSON merge patch). */
import type { CommandSpec } from '../../../command.js';
import { LocalError } from '../../../errors.js';
import { destinationBody, destinationFlags } from '../destination-flags.js';
import { MERGE_PATCH, destPath, printDestination, typeArg } from '../views.js';
import { PAIRS } from './create.js';

export const update: CommandSpec = {
  words: ['sync', 'dest', 'update'],
  summary: 'Change fields of an existing destination (JSON merge patch; omitted fields keep their values)',
  args: [{ name: 'type', help: 'destination type' }, { name: 'name', help: 'destination name' }, PAIRS],
  flags: destinationFlags(),
  stdin: 'a sensitive field given as -',
  async run(inv) {
    const t = typeArg(inv.args.type);
    const body = await destinationBody(inv, t, inv.args.pairs);
    if (Object.keys(body).length === 0) throw new LocalError('nothing to update: give at least one field');
    const r = await inv.client.request('PATCH', destPath(t, inv.args.name), body, { headers: MERGE_PATCH });
    await printDestination(inv, (r.body?.data ?? {}) as Record<string, unknown>);
  },
};
