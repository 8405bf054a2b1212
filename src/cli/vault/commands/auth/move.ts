/** `vault auth move SOURCE DESTINATION`: move an auth method to another path (sys/remount of auth/...). */
import type { CommandSpec } from '../../../command.js';
import { moveMount, trimSlashes } from '../../move.js';

export const move: CommandSpec = {
  words: ['auth', 'move'],
  summary: 'Move an auth method to a new path',
  args: [{ name: 'source' }, { name: 'destination' }],
  examples: ['vault auth move approle/ ci-approle/'],
  run(inv) {
    const path = (p: string) => `auth/${trimSlashes(trimSlashes(p).replace(/^auth\//, ''))}/`;
    return moveMount(inv, path(inv.args.source), path(inv.args.destination), 'auth method');
  },
};
