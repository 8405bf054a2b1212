/** `keyhold kv list [PATH]`: secrets and folders (folders end with /). */
import { optArg, type CommandSpec } from '../../command.js';
import { ServerError } from '../../errors.js';
import { dataOf, emit } from './render.js';
import { apiPath, resolveTarget, shownPath } from './target.js';
import { MOUNT } from './write.js';

export const list: CommandSpec = {
  words: ['kv', 'list'],
  summary: 'List secrets and folders (folders end with /)',
  args: [optArg('path', 'folder, e.g. secret/ or secret/app', { default: '' })],
  flags: [MOUNT],
  async run(inv) {
    const t = await resolveTarget(inv.client, inv.args.path, inv.opts.mount);
    const res = await inv.client.request('LIST', apiPath(t, 'metadata'), undefined, { allowStatus: [404] });
    const keys = (dataOf(res).keys ?? []) as string[];
    if (res.status === 404 || keys.length === 0)
      throw new ServerError(404, [`No value found at ${shownPath(t, 'metadata')}/`], res.body);
    await emit(inv, keys, keys, () => `Keys\n----\n${keys.join('\n')}\n`);
  },
};
