/** `vault kv enable-versioning PATH`: upgrade a KV version 1 mount to version 2 (sys/mounts/PATH/tune). */
import type { CommandSpec } from '../../../command.js';
import { LocalError } from '../../../errors.js';

export const enableVersioning: CommandSpec = {
  words: ['kv', 'enable-versioning'],
  summary: 'Turn on versioning (KV version 2) for a KV version 1 mount',
  args: [{ name: 'path', help: 'mount path' }],
  examples: ['vault kv enable-versioning secret/'],
  async run(inv) {
    const path = String(inv.args.path).replace(/^\/+|\/+$/g, '');
    if (!path) throw new LocalError('give the mount path');
    const res = await inv.client.write(`sys/mounts/${path}/tune`, { options: { version: '2' } });
    for (const w of (res.body?.warnings as string[] | null | undefined) ?? []) inv.io.stderr.write(`WARNING! ${w}\n`);
    inv.success(`Success! Tuned the secrets engine at: ${path}/`);
  },
};
