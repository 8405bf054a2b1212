/** `keyhold transit keys backup NAME`: the plaintext backup to stdout or --output (0600). */
import { flag, type CommandSpec } from '../../../command.js';
import { MOUNT, mountOf } from '../io.js';
import { emit, enc } from './output.js';

export const backup: CommandSpec = {
  words: ['transit', 'keys', 'backup'],
  summary: 'Print a Vault-format plaintext backup of a key (needs exportable and allow_plaintext_backup)',
  args: [{ name: 'name', help: 'key name' }],
  flags: [MOUNT, flag('--output <file>', 'write the backup to this file (mode 0600) instead of stdout')],
  examples: [
    'keyhold transit keys backup payments --output payments.backup',
    'keyhold transit keys backup payments > payments.backup',
  ],
  async run(inv) {
    const res = await inv.client.request('GET', `${mountOf(inv)}/backup/${enc(inv.args.name)}`);
    const blob = String((res.body?.data as { backup?: string } | undefined)?.backup ?? '');
    emit(inv, blob + '\n', inv.opts.output, 'Backup');
  },
};
