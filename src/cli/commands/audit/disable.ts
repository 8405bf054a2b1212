/** `keyhold audit disable PATH` (the log file is kept; asks first on a terminal). */
import type { CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';

export const disable: CommandSpec = {
  words: ['audit', 'disable'],
  summary: 'Disable an audit device (its log file is kept)',
  confirm: (a) => `Disable audit device "${a[0]}"?`,
  args: [{ name: 'path', help: 'device path, e.g. file' }],
  async run(inv) {
    const where = String(inv.args.path).replace(/^\/+|\/+$/g, '');
    if (!where) throw new LocalError('path must not be empty');
    await inv.client.delete(`sys/audit/${where}`);
    inv.success(`Success! Disabled audit device (if it was enabled) at: ${where}/`);
  },
};
