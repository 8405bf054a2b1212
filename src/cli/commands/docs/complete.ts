/**
 * `keyhold __complete SOURCE WORDS...` (hidden): completion candidates from the daemon, for the
 * completion scripts. Never fails: no daemon (or a slow one) answers nothing.
 */
import { optArg, type CommandSpec } from '../../command.js';
import { Client } from '../../client.js';

/** How long `__complete` waits for the daemon before answering nothing. */
const COMPLETE_TIMEOUT_MS = 800;

export const complete: CommandSpec = {
  words: ['__complete'],
  summary: 'Completion candidates from the daemon (used by the completion scripts)',
  hidden: true,
  passThrough: true,
  args: [{ name: 'source' }, optArg('words', undefined, { variadic: true })],
  async run(inv) {
    const words = (inv.args.words ?? []) as string[];
    let out: string[] = [];
    try {
      const { candidates, parseWords, withTimeout } = await import('../../../docs/complete.js');
      const info = parseWords(words);
      const client = new Client({ address: info.options['--address'], token: info.options['--token'] });
      out = await withTimeout(candidates(inv.args.source as never, words, client), COMPLETE_TIMEOUT_MS, []);
    } catch {
      out = [];
    }
    // Exit once written: a daemon that never answers must not keep the shell waiting.
    inv.io.stdout.write(out.length ? out.join('\n') + '\n' : '', () => process.exit(0));
  },
};
