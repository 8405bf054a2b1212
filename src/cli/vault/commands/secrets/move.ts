/** `vault secrets move SOURCE DESTINATION`: move a secrets engine to another path (sys/remount). */
import type { CommandSpec } from '../../../command.js';
import { moveMount, trimSlashes } from '../../move.js';

export const move: CommandSpec = {
  words: ['secrets', 'move'],
  summary: 'Move a secrets engine to a new path; its data moves with it',
  args: [{ name: 'source' }, { name: 'destination' }],
  examples: ['vault secrets move secret/ generic/'],
  run(inv) {
    return moveMount(
      inv,
      `${trimSlashes(inv.args.source)}/`,
      `${trimSlashes(inv.args.destination)}/`,
      'secrets engine',
    );
  },
};
