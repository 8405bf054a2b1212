/** `keyhold kv get PATH [--version=N]`: a secret's data and metadata. */
import { flag, type CommandSpec } from '../../command.js';
import { LocalError, ServerError } from '../../errors.js';
import { table } from '../../output.js';
import { dataOf, emit, intFlag, kvSection, pathSection, show } from './render.js';
import { apiPath, needV2, secretTarget, shownPath, type Target } from './target.js';
import { MOUNT } from './write.js';
import type { Invocation } from '../../command.js';

/** `kv get` on a KV version 1 mount. */
async function getV1(inv: Invocation, t: Target, version: number | undefined): Promise<void> {
  if (version) needV2(t, 'kv get --version');
  const r1 = await inv.client.request('GET', apiPath(t, ''), undefined, { allowStatus: [404] });
  if (r1.status === 404) throw new ServerError(404, [`No value found at ${shownPath(t, '')}`], r1.body);
  const d1 = dataOf(r1);
  await emit(inv, r1.body, d1, () => table(Object.fromEntries(Object.entries(d1).map(([k, v]) => [k, show(k, v)]))));
}

export const get: CommandSpec = {
  words: ['kv', 'get'],
  summary: 'Read a secret (current version, or --version=N)',
  args: [{ name: 'path', help: 'secret path' }],
  // The global -v/--version flag takes `--version N`; `--version=N` reaches this option.
  flags: [flag('--version <n>', 'version to read; write it as --version=N (0 = current)'), MOUNT],
  examples: [
    'keyhold kv get secret/app/db',
    'keyhold kv get --version=2 secret/app/db',
    'keyhold --field password kv get secret/app/db',
  ],
  async run(inv) {
    const t = await secretTarget(inv.client, inv.args.path, inv.opts.mount);
    const version = intFlag('--version', inv.opts.version);
    if (t.v1) return getV1(inv, t, version);
    const q = version ? `?version=${version}` : '';
    const res = await inv.client.request('GET', apiPath(t, 'data') + q, undefined, { allowStatus: [404] });
    const d = dataOf(res);
    const secretPath = pathSection('Secret Path', shownPath(t, 'data'));
    if (res.status === 404) {
      const meta = d.metadata as Record<string, unknown> | undefined;
      if (!meta) throw new ServerError(404, [`No value found at ${shownPath(t, 'data')}`], res.body);
      // As `vault kv get`: a deleted or destroyed version shows its metadata and exits 0 (no data, so no field).
      if (inv.globals.field)
        throw new LocalError(
          `field "${inv.globals.field}" not present: version ${String(meta.version)} of ${shownPath(t, 'data')} is ${meta.destroyed ? 'destroyed' : 'deleted'}`,
        );
      await emit(inv, res.body, meta, () => `${secretPath}\n${kvSection('Metadata', meta)}`);
      return;
    }
    const data = (d.data ?? {}) as Record<string, unknown>;
    const meta = (d.metadata ?? {}) as Record<string, unknown>;
    await emit(inv, res.body, data, () => `${secretPath}\n${kvSection('Metadata', meta)}\n${kvSection('Data', data)}`);
  },
};
