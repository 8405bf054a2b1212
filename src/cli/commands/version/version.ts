/** `keyhold version` (and the vault-style `-version`): version, commit, build date and Node.js of this build. */
import type { CommandSpec } from '../../command.js';

export const version: CommandSpec = {
  words: ['version'],
  summary:
    'Print the version, the commit, the build date and the Node.js version of this keyhold (also `keyhold -version`)',
  async run(inv) {
    const { buildInfo, versionLine } = await import('../../../build-info.js');
    const b = buildInfo();
    inv.io.stdout.write(
      inv.globals.format === 'json'
        ? JSON.stringify(
            { version: b.version, commit: b.commit, build_date: b.buildDate, node: b.node, runtime: b.runtime },
            null,
            2,
          ) + '\n'
        : versionLine(b) + '\n',
    );
    return 0;
  },
};
