/** `keyhold transit keys wrapping-key`: the mount's RSA-4096 wrapping public key (PEM). */
import type { CommandSpec } from '../../../command.js';
import { MOUNT, mountOf } from '../io.js';

export const wrappingKey: CommandSpec = {
  words: ['transit', 'keys', 'wrapping-key'],
  summary: "Print the mount's RSA-4096 wrapping public key (PEM) used to build import ciphertexts",
  flags: [MOUNT],
  async run(inv) {
    const res = await inv.client.request('GET', `${mountOf(inv)}/wrapping_key`);
    const g = inv.globals;
    if (g.format || g.field) await inv.print(res.body?.data ?? null);
    else inv.io.stdout.write(String((res.body?.data as { public_key?: string } | undefined)?.public_key ?? ''));
  },
};
