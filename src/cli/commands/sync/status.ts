/** `keyhold sync status [--type] [--name] [--failed] [--watch [SECONDS]]`: every association's sync status. */
import { flag, type ApiClient, type CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';
import { destPath, listOrEmpty, printRows, rowsOf, typeArg, type StatusRow } from './views.js';

interface Filter {
  type?: string;
  name?: string;
  failed?: boolean;
}

/** The status rows of every association of the destinations selected by `f`. */
async function statusRows(client: ApiClient, f: Filter): Promise<StatusRow[]> {
  const data = await listOrEmpty(client, 'sys/sync/destinations');
  const info = (data.key_info ?? {}) as Record<string, string[]>;
  let rows: StatusRow[] = [];
  for (const k of Object.keys(info).sort()) {
    const type = k.replace(/\/$/, '');
    if (f.type && type !== f.type) continue;
    for (const name of info[k]!) {
      if (f.name && name !== f.name) continue;
      const r = await client.read(destPath(type, name, '/associations'));
      rows.push(...rowsOf(type, name, (r.body?.data ?? {}) as Record<string, unknown>));
    }
  }
  if (f.failed)
    rows = rows.filter((r) => !['SYNCED', 'UNSYNCED', 'PENDING', 'SYNCING', 'UNSYNCING'].includes(r.sync_status));
  return rows;
}

export const status: CommandSpec = {
  words: ['sync', 'status'],
  summary: 'Sync status of every association (coloured on a terminal)',
  flags: [
    flag('--type <type>', 'only destinations of this type'),
    flag('--name <name>', 'only destinations with this name'),
    flag('--failed', 'only associations whose last operation failed'),
    flag('--watch [seconds]', 'print the status again every SECONDS (default 2) until Ctrl-C'),
  ],
  examples: ['keyhold sync status --failed', 'keyhold sync status --type repohost --watch 5'],
  async run(inv) {
    const opts = inv.opts as Filter & { watch?: string | true };
    const client = inv.client;
    if (opts.type) typeArg(opts.type);
    if (opts.watch === undefined) return printRows(inv, await statusRows(client, opts));
    const seconds = opts.watch === true ? 2 : Number(opts.watch);
    if (!Number.isFinite(seconds) || seconds < 0.1 || seconds > 86_400)
      throw new LocalError('--watch: SECONDS must be a number from 0.1 to 86400');
    // Runs until Ctrl-C, which ends the CLI with 130 (src/cli/signals.ts). On a terminal each round
    // redraws the screen, like watch(1); into a pipe the rounds follow each other, a blank line apart.
    const out = inv.io.stdout;
    const tty = out.isTTY === true;
    for (let round = 0; ; round++) {
      const rows = await statusRows(client, opts);
      if (tty) out.write('\x1b[H\x1b[2J');
      else if (round > 0) out.write('\n');
      if (tty) out.write(`Every ${seconds}s: keyhold sync status (Ctrl-C to stop)\n\n`);
      await printRows(inv, rows);
      await new Promise((r) => setTimeout(r, seconds * 1000));
    }
  },
};
