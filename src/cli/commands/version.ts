/** `keyhold version` (and the vault-style `-version`): version, commit, build date and Node.js of this build. */
import type { Command } from 'commander';

/** Register `keyhold version` on `program`. */
export function register(program: Command, _ctx?: unknown): void {
  program
    .command('version')
    .description(
      'Print the version, the commit, the build date and the Node.js version of this keyhold (also `keyhold -version`)',
    )
    .action(async (_opts: unknown, cmd: Command) => {
      const format = (cmd.optsWithGlobals() as { format?: string }).format;
      const { buildInfo, versionLine } = await import('../../build-info.js');
      const b = buildInfo();
      process.stdout.write(
        format === 'json'
          ? JSON.stringify(
              { version: b.version, commit: b.commit, build_date: b.buildDate, node: b.node, runtime: b.runtime },
              null,
              2,
            ) + '\n'
          : versionLine(b) + '\n',
      );
    });
}
