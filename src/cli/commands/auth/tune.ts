/** `keyhold auth tune PATH`: TTLs, description, token type. */
import { flag, type CommandSpec } from '../../command.js';
import { tuneBody, tuneFlags } from './enable.js';

export const tune: CommandSpec = {
  words: ['auth', 'tune'],
  summary: 'Tune an auth method (TTLs, description, token type)',
  args: [{ name: 'path' }],
  flags: [flag('--description <text>', 'human description'), ...tuneFlags(true)],
  async run(inv) {
    const p = String(inv.args.path).replace(/^\/+|\/+$/g, '');
    const body: Record<string, unknown> = {};
    if (inv.opts.description !== undefined) body.description = inv.opts.description;
    Object.assign(body, tuneBody(inv.opts));
    await inv.client.write(`sys/auth/${p}/tune`, body);
    inv.success(`Success! Tuned the auth method at: ${p}/`);
  },
};
