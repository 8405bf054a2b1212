/** `keyhold secrets enable TYPE`: mount an engine. */
import { flag, type CommandSpec } from '../../command.js';

export const enable: CommandSpec = {
  words: ['secrets', 'enable'],
  summary: 'Mount an engine: transit, kv-v2 (or kv with --version 2), kv-v1 or kv with --version 1 (unversioned)',
  args: [{ name: 'type' }],
  flags: [
    flag('--path <path>', 'mount path (default: the type)'),
    flag('--description <text>', 'description'),
    flag('--version <n>', 'kv version: 2 (default) or 1'),
  ],
  examples: [
    'keyhold secrets enable transit',
    'keyhold secrets enable --path=payments transit',
    'keyhold secrets enable --path=team kv-v2',
  ],
  async run(inv) {
    const type = inv.args.type as string;
    const o = inv.opts;
    const path = (o.path ?? type).replace(/^\/+|\/+$/g, '');
    const body: Record<string, unknown> = { type, description: o.description ?? '' };
    if (type === 'kv' || type === 'kv-v2') body.options = { version: o.version ?? '2' };
    if (type === 'kv-v1') body.options = { version: '1' };
    await inv.client.write(`sys/mounts/${path}`, body);
    inv.success(`Success! Enabled the ${type} secrets engine at: ${path}/`);
  },
};
