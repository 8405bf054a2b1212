/** `keyhold transit random [BYTES]`: random bytes from the daemon, as text or raw. */
import { flag, optArg, type CommandSpec } from '../../command.js';
import { bodyOf, fieldFlag } from '../../route-flags.js';
import { MOUNT, dataOf, intOpt, mountOf, structured, writeOut } from './io.js';
import { RANDOM } from './routes.js';

const fields = [fieldFlag(RANDOM, 'source', { value: 'source' })];

export const random: CommandSpec = {
  words: ['transit', 'random'],
  summary: 'Random bytes from the daemon (base64 text by default)',
  args: [optArg('bytes', 'number of bytes (default 32)')],
  flags: [
    MOUNT,
    flag('--encoding <enc>', 'base64 (default) or hex'),
    ...fields,
    flag('--binary', 'write the raw bytes instead of text'),
  ],
  async run(inv) {
    const body: Record<string, unknown> = { format: inv.opts.binary ? 'base64' : (inv.opts.encoding ?? 'base64') };
    if (inv.args.bytes !== undefined) body.bytes = intOpt(inv.args.bytes);
    Object.assign(body, bodyOf(fields, inv.opts));
    const res = await inv.client.write(`${mountOf(inv)}/random`, body);
    const data = dataOf(res);
    if (structured(inv)) return inv.print(data);
    const v = String(data.random_bytes ?? '');
    await writeOut(inv, inv.opts.binary ? Buffer.from(v, 'base64') : v + '\n');
  },
};
