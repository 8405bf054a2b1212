/** `keyhold operator seal` (asks first on a terminal: src/cli/confirmations.ts). */
import { flag, type CommandSpec } from '../../command.js';

export const seal: CommandSpec = {
  words: ['operator', 'seal'],
  summary: 'Seal the daemon (forget keys until unsealed)',
  confirm: () => 'Seal keyhold? Every request fails until it is unsealed again.',
  flags: [flag('-y, --yes', 'do not ask for confirmation')],
  async run(inv) {
    await inv.client.request('POST', 'sys/seal', {});
    inv.success('Success! keyhold is sealed.');
  },
};
