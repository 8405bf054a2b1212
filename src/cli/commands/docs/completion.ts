/** `keyhold completion bash|zsh|fish`: the shell completion script (generated from the command list). */
import type { CommandSpec } from '../../command.js';

export const completion: CommandSpec = {
  words: ['completion'],
  summary: 'Print the shell completion script (bash, zsh or fish)',
  args: [{ name: 'shell', help: 'shell to complete for', choices: ['bash', 'zsh', 'fish'] }],
  async run(inv) {
    const { completionScript } = await import('../../../docs/generate.js');
    inv.io.stdout.write(completionScript(inv.args.shell));
  },
};
