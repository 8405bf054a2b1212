/** `keyhold sync config [--disabled true|false] [--queue-capacity N] [--reset]`: show or change the global sync config. */
import { flag, type CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';
import { MERGE_PATCH } from './views.js';

export const config: CommandSpec = {
  words: ['sync', 'config'],
  summary: 'Show or change the global sync configuration',
  flags: [
    flag('--disabled <bool>', 'true stops all outbound sync (operations wait as PENDING)', {
      choices: ['true', 'false'],
    }),
    flag('--queue-capacity <n>', 'upper bound on queued operations'),
    flag('--reset', 'restore the defaults'),
  ],
  async run(inv) {
    const opts = inv.opts as { disabled?: string; queueCapacity?: string; reset?: boolean };
    const client = inv.client;
    if (opts.reset) {
      await client.delete('sys/sync/config');
      inv.io.stderr.write('Success! Sync configuration reset to defaults.\n');
      return;
    }
    const body: Record<string, unknown> = {};
    if (opts.disabled !== undefined) body.disabled = opts.disabled === 'true';
    if (opts.queueCapacity !== undefined) {
      if (!/^\d+$/.test(opts.queueCapacity) || Number(opts.queueCapacity) < 1)
        throw new LocalError('--queue-capacity must be a positive integer');
      body.queue_capacity = Number(opts.queueCapacity);
    }
    const r = Object.keys(body).length
      ? await client.request('PATCH', 'sys/sync/config', body, { headers: MERGE_PATCH })
      : await client.read('sys/sync/config');
    await inv.print(r.body?.data ?? {});
  },
};
