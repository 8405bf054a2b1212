/** `keyhold quota write NAME k=v...`: create or update a rate-limit quota. */
import { optArg, type CommandSpec } from '../../command.js';
import { quotaPath } from './quota-path.js';

export const write: CommandSpec = {
  words: ['quota', 'write'],
  summary: 'Create or update a rate-limit quota',
  args: [
    { name: 'name', help: 'quota name' },
    optArg('fields', 'rate=N (required on create), path=MOUNT[/PATH][*], role=NAME, interval=1s, block_interval=0s', {
      variadic: true,
    }),
  ],
  examples: [
    'keyhold quota write transit-cap path=transit/ rate=500',
    'keyhold quota write ci-login path=auth/approle role=ci rate=5 interval=1m block_interval=5m',
  ],
  async run(inv) {
    const path = quotaPath(inv.args.name);
    const res = await inv.client.write(path, await inv.parsePairs(inv.args.fields ?? []));
    for (const w of (res.body?.warnings ?? []) as string[]) inv.io.stderr.write(`WARNING! ${w}\n`);
    inv.success(`Success! Data written to: ${path}`);
  },
};
