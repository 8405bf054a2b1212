/** `keyhold kv metadata get PATH`: settings and version history. */
import type { CommandSpec } from '../../../command.js';
import { ServerError } from '../../../errors.js';
import { dataOf, emit, kvSection, pathSection } from '../render.js';
import { apiPath, secretTarget, shownPath } from '../target.js';
import { MOUNT } from '../write.js';

export const get: CommandSpec = {
  words: ['kv', 'metadata', 'get'],
  summary: 'Show the metadata and version history of a secret',
  args: [{ name: 'path', help: 'secret path' }],
  flags: [MOUNT],
  async run(inv) {
    const t = await secretTarget(inv.client, inv.args.path, inv.opts.mount);
    const res = await inv.client.request('GET', apiPath(t, 'metadata'), undefined, { allowStatus: [404] });
    if (res.status === 404) throw new ServerError(404, [`No value found at ${shownPath(t, 'metadata')}`], res.body);
    const d = dataOf(res);
    await emit(inv, res.body, d, () => {
      const { versions, ...rest } = d as { versions?: Record<string, Record<string, unknown>> };
      let out = `${pathSection('Metadata Path', shownPath(t, 'metadata'))}\n${kvSection('Metadata', rest)}`;
      const nums = Object.keys(versions ?? {})
        .map(Number)
        .sort((a, b) => a - b);
      for (const n of nums) out += `\n${kvSection(`Version ${n}`, versions![String(n)]!)}`;
      return out;
    });
  },
};
