/** `keyhold sync assoc set|remove TYPE NAME --mount M --secret S`. */
import { flag, type ArgSpec, type CommandSpec, type FlagSpec } from '../../../command.js';
import { destPath, printRows, rowsOf, typeArg, wantsTable } from '../views.js';

const ARGS: ArgSpec[] = [
  { name: 'type', help: 'destination type' },
  { name: 'name', help: 'destination name' },
];
const FLAGS: FlagSpec[] = [
  flag('--mount <path>', 'mount path of the KV v2 engine, e.g. secret', { required: true }),
  flag('--secret <name>', 'secret path within the mount, e.g. app/db', { required: true }),
];

function assocCommand(word: 'set' | 'remove', summary: string): CommandSpec {
  return {
    words: ['sync', 'assoc', word],
    summary,
    args: ARGS,
    flags: FLAGS,
    async run(inv) {
      const { type, name } = inv.args as { type: string; name: string };
      const secret = inv.opts.secret as string;
      const r = await inv.client.write(destPath(typeArg(type), name, `/associations/${word}`), {
        mount: inv.opts.mount,
        secret_name: secret,
      });
      const data = (r.body?.data ?? {}) as Record<string, unknown>;
      if (!wantsTable(inv)) return inv.print(data);
      const rows = rowsOf(type, name, data).filter((row) => row.secret_name === secret.replace(/^\/+/, ''));
      if (word === 'remove' && !rows.length) inv.io.stderr.write('Success! No such association (nothing to remove).\n');
      else await printRows(inv, rows);
    },
  };
}

export const set = assocCommand('set', 'Associate a secret with a destination (or refresh it, retrying a failed sync)');
export const remove = assocCommand('remove', 'Remove an association; the secret is deleted at the destination');
