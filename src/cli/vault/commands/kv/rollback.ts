/**
 * `vault kv rollback -version=N PATH`: write version N's data again as the newest version (KV v2),
 * with check-and-set on the current version so a concurrent write is not overwritten. A deleted or
 * destroyed version N is refused (exit 2), as the vault CLI does.
 */
import { flag, type CommandSpec } from '../../../command.js';
import { LocalError, ServerError } from '../../../errors.js';
import { dataOf, intFlag } from '../../../commands/kv/render.js';
import { apiPath, needV2, secretTarget, shownPath } from '../../../commands/kv/target.js';
import { MOUNT, writeVersion } from '../../../commands/kv/write.js';

export const rollback: CommandSpec = {
  words: ['kv', 'rollback'],
  summary: 'Restore an earlier version of a secret as its newest version (KV version 2)',
  args: [{ name: 'path', help: 'secret path' }],
  flags: [flag('--version <n>', 'the version to roll back to'), MOUNT],
  examples: ['vault kv rollback -version=2 secret/app/db'],
  async run(inv) {
    const version = intFlag('-version', inv.opts.version);
    if (!version) throw new LocalError('Must specify a version to rollback to with -version');
    const t = await secretTarget(inv.client, inv.args.path, inv.opts.mount);
    needV2(t, 'kv rollback');
    const meta = dataOf(await inv.client.read(apiPath(t, 'metadata')));
    const current = Number(meta.current_version ?? 0);
    const v = ((meta.versions ?? {}) as Record<string, { deletion_time?: string; destroyed?: boolean }>)[
      String(version)
    ];
    if (!v) throw new ServerError(400, [`version ${version} of ${shownPath(t, 'data')} does not exist`], null);
    if (v.destroyed) throw new ServerError(400, [`Cannot roll back to a destroyed version (${version})`], null);
    if (v.deletion_time) throw new ServerError(400, [`Cannot roll back to a deleted version (${version})`], null);
    const old = dataOf(await inv.client.read(apiPath(t, 'data'), { version: String(version) }));
    await writeVersion(inv, t, 'POST', { data: old.data ?? {}, options: { cas: current } });
  },
};
