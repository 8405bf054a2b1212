/** `keyhold auth disable PATH`. */
import type { CommandSpec } from '../../command.js';

export const disable: CommandSpec = {
  words: ['auth', 'disable'],
  summary: 'Disable an auth method (revokes every token it issued)',
  args: [{ name: 'path' }],
  async run(inv) {
    const p = String(inv.args.path).replace(/^\/+|\/+$/g, '');
    await inv.client.delete(`sys/auth/${p}`);
    inv.success(`Success! Disabled the auth method (if it existed) at: ${p}/`);
  },
};
