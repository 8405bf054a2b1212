/** `keyhold kv patch PATH DATA...`: change some keys, keep the others (a new version). */
import { collect, flag, optArg, type CommandSpec } from '../../command.js';
import { intFlag } from './render.js';
import { needV2, secretTarget } from './target.js';
import { DATA_HELP, MOUNT, secretData, writeVersion } from './write.js';

export const patch: CommandSpec = {
  words: ['kv', 'patch'],
  summary: 'Change some keys of a secret, keeping the others (creates a new version)',
  args: [{ name: 'path', help: 'secret path' }, optArg('data', DATA_HELP, { variadic: true })],
  flags: [
    flag('--cas <version>', 'check-and-set: patch only if the current version is this'),
    flag('--remove <key>', 'remove this key (repeatable)', { parse: collect }),
    MOUNT,
  ],
  stdin: 'a value given as key=-, or the JSON object given as -',
  examples: ['keyhold kv patch secret/app/db password=@new.txt', 'keyhold kv patch --remove old_key secret/app/db'],
  async run(inv) {
    const pairs = inv.args.data as string[];
    const remove = (inv.opts.remove ?? []) as string[];
    const data: Record<string, unknown> = pairs.length || !remove.length ? await secretData(inv, pairs) : {};
    for (const k of remove) data[k] = null;
    const t = await secretTarget(inv.client, inv.args.path, inv.opts.mount);
    needV2(t, 'kv patch');
    const body: Record<string, unknown> = { data };
    const cas = intFlag('--cas', inv.opts.cas);
    if (cas !== undefined) body.options = { cas };
    await writeVersion(inv, t, 'PATCH', body);
  },
};
