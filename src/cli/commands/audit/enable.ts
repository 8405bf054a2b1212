/** `keyhold audit enable TYPE [k=v...]`: enable an audit device (like `vault audit enable`). */
import { flag, optArg, type CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';

export const enable: CommandSpec = {
  words: ['audit', 'enable'],
  summary: 'Enable an audit device',
  args: [
    { name: 'type', help: 'device type: file' },
    optArg(
      'options',
      'device options as key=value: path=FILE (or file_path=FILE), mode=0600, hmac_accessor=true, elide_list_responses=false, prefix=TEXT',
      { variadic: true },
    ),
  ],
  flags: [
    flag('--path <path>', 'where to enable the device (default: the type name)'),
    flag('--description <text>', 'human description', { default: '' }),
    flag('--local', 'accepted for compatibility'),
  ],
  examples: [
    'keyhold audit enable file path=/var/log/keyhold-audit.log',
    'keyhold audit enable --path=backup file file_path=/mnt/logs/keyhold.log mode=0640',
  ],
  async run(inv) {
    const type = inv.args.type as string;
    const raw = await inv.parsePairs(inv.args.options);
    const options: Record<string, string> = {};
    for (const [k, v] of Object.entries(raw)) {
      if (typeof v === 'object' && v !== null) throw new LocalError(`option ${k}: expected a plain value`);
      options[k === 'path' ? 'file_path' : k] = String(v);
    }
    const where = (inv.opts.path ?? type).replace(/^\/+|\/+$/g, '');
    if (!where) throw new LocalError('--path must not be empty');
    await inv.client.write(`sys/audit/${where}`, {
      type,
      description: inv.opts.description,
      options,
      local: Boolean(inv.opts.local),
    });
    inv.success(`Success! Enabled the ${type} audit device at: ${where}/`);
  },
};
