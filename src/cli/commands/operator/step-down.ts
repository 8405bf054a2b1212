/** `keyhold operator step-down`: the active node gives up the lock. */
import type { CommandSpec } from '../../command.js';

export const stepDown: CommandSpec = {
  words: ['operator', 'step-down'],
  summary: 'Make the active cluster node give up the lock (sudo); another node takes over',
  async run(inv) {
    await inv.client.request('POST', 'sys/step-down', {});
    inv.success('Success! Stepped down: the active node gave up the lock.');
  },
};
