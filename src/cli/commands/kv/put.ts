/** `keyhold kv put PATH DATA...`: a new version of a secret (all keys replaced). */
import { flag, optArg, type CommandSpec } from '../../command.js';
import { intFlag } from './render.js';
import { apiPath, secretTarget, shownPath } from './target.js';
import { DATA_HELP, MOUNT, secretData, writeVersion } from './write.js';

export const put: CommandSpec = {
  words: ['kv', 'put'],
  summary: 'Write a new version of a secret (replaces all keys)',
  args: [{ name: 'path', help: 'secret path, e.g. secret/app/db' }, optArg('data', DATA_HELP, { variadic: true })],
  flags: [
    flag('--cas <version>', 'check-and-set: write only if the current version is this (0 = only if absent)'),
    MOUNT,
  ],
  stdin: 'a value given as key=-, or the JSON object given as -',
  examples: [
    'keyhold kv put secret/app/db user=admin password=@pw.txt',
    'printf s3cr3t | keyhold kv put --cas 1 secret/app/db password=-',
    'keyhold kv put secret/app/config - < config.json',
  ],
  async run(inv) {
    const data = await secretData(inv, inv.args.data);
    const t = await secretTarget(inv.client, inv.args.path, inv.opts.mount);
    if (t.v1) {
      await inv.client.write(apiPath(t, ''), data);
      inv.success(`Success! Data written to: ${shownPath(t, '')}`);
      return;
    }
    const body: Record<string, unknown> = { data };
    const cas = intFlag('--cas', inv.opts.cas);
    if (cas !== undefined) body.options = { cas };
    await writeVersion(inv, t, 'POST', body);
  },
};
