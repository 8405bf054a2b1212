/** `keyhold path-help PATH`: the HTTP route serving a path (like `vault path-help`). */
import type { CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';

export const pathHelp: CommandSpec = {
  words: ['path-help'],
  summary: 'Describe the HTTP route serving a path: summary, operations and fields (like vault path-help)',
  args: [{ name: 'path', help: 'full path, e.g. transit/keys/app' }],
  async run(inv) {
    const path = inv.args.path as string;
    const { DEV_MOUNTS, mountedRoutes } = await import('../../../docs/catalog.js');
    const { findPath, pathHelp: describe, renderPathHelp } = await import('../../../docs/path-help.js');
    let live: Array<{ path: string; type: string; description?: string }>;
    try {
      const res = await inv.client.read('sys/mounts');
      const data = (res.body?.data ?? {}) as Record<string, { type?: string; description?: string }>;
      live = Object.entries(data).map(([p, m]) => ({
        path: p,
        type: String(m.type ?? ''),
        description: m.description,
      }));
    } catch (e) {
      // Without a daemon (or permission to list mounts), assume the dev mounts and say so.
      inv.io.stderr.write(
        `note: could not read sys/mounts (${(e as Error).message}); assuming transit/ and secret/ mounts\n`,
      );
      live = [...DEV_MOUNTS];
    }
    const hit = findPath(mountedRoutes(live), path);
    if (!hit) throw new LocalError(`no route serves "${path}"; run \`keyhold secrets list\` to see the mounts`);
    const help = describe(path, hit.mount, hit.route);
    const g = inv.globals;
    if (g.field || (g.format && g.format !== 'table')) await inv.print(help);
    else inv.io.stdout.write(renderPathHelp(help));
  },
};
