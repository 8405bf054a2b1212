/** `keyhold transit keys restore [NAME]`: the backup from stdin or --backup @file, never argv. */
import { flag, optArg, type CommandSpec } from '../../../command.js';
import { LocalError } from '../../../errors.js';
import { MOUNT, mountOf } from '../io.js';
import { enc, readSource } from './output.js';

export const restore: CommandSpec = {
  words: ['transit', 'keys', 'restore'],
  summary: 'Restore a key from a backup read from stdin (or --backup @file)',
  args: [optArg('name', 'name for the restored key (default: the name in the backup)')],
  flags: [
    MOUNT,
    flag('--backup <@file|->', 'where to read the backup: @file or - (stdin, the default)', { default: '-' }),
    flag('--force', 'overwrite an existing key of that name'),
  ],
  stdin: 'the backup (unless --backup @file)',
  examples: [
    'keyhold transit keys restore payments < payments.backup',
    'keyhold transit keys restore --backup @payments.backup --force',
  ],
  async run(inv) {
    const o = inv.opts as { backup: string; force?: boolean };
    const name = inv.args.name as string | undefined;
    if (o.backup !== '-' && !o.backup.startsWith('@'))
      throw new LocalError('--backup is secret: pass @file or - (stdin), not the value itself');
    const blob = (await readSource(inv, o.backup)).toString('utf8').trim();
    if (!blob) throw new LocalError('no backup given: pipe it on stdin or pass --backup @file');
    await inv.client.request('POST', `${mountOf(inv)}/restore${name ? '/' + enc(name) : ''}`, {
      backup: blob,
      force: Boolean(o.force),
    });
    inv.success(`Success! Restored key${name ? ' ' + name : ''}`);
  },
};
