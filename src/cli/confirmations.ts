/**
 * Destructive commands, in one table: each gets `-y/--yes` and asks before it runs when stdin and
 * stderr are a terminal (src/cli/tty.ts `confirm`); on pipes and in scripts it proceeds, so automation
 * never hangs on a prompt. A declined prompt exits 1 with nothing changed.
 */
import type { Command } from 'commander';
import { addYesOption, confirmCommand } from './tty.js';

/** Command path -> the question asked (from its positional arguments). */
export const DESTRUCTIVE: Readonly<Record<string, (args: string[]) => string>> = {
  'operator seal': () => 'Seal keyhold? Every request fails until it is unsealed again.',
  'secrets disable': (a) => `Disable the engine at "${a[0]}" and delete all of its data?`,
  'transit keys delete': (a) => `Delete transit key "${a[0]}"? Data encrypted with it can no longer be decrypted.`,
  'transit keys trim': (a) => `Trim old versions of transit key "${a[0]}"? Removed versions are gone for good.`,
  'kv destroy': (a) => `Permanently destroy the given versions of "${a[0]}"?`,
  'kv metadata delete': (a) => `Delete "${a[0]}" with all of its versions and metadata?`,
  'sync dest delete': (a) => `Delete sync destination ${a.join('/')}?`,
  'audit disable': (a) => `Disable audit device "${a[0]}"?`,
  'policy delete': (a) => `Delete policy "${a[0]}"?`,
  'token revoke': () => 'Revoke the token and the tokens created with it?',
};

function find(root: Command, words: string[]): Command | undefined {
  let cur: Command | undefined = root;
  for (const w of words) cur = cur?.commands.find((c) => c.name() === w);
  return cur;
}

/** Add --yes and the confirmation hook to every destructive command present in `program`. */
export function installConfirmations(program: Command): void {
  for (const [path, question] of Object.entries(DESTRUCTIVE)) {
    const cmd = find(program, path.split(' '));
    if (!cmd) continue;
    addYesOption(cmd);
    cmd.hook('preAction', async (_self, action) => {
      await confirmCommand(action, question(action.args));
    });
  }
}
