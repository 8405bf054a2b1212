/** `keyhold operator migrate --config FILE`: copy storage offline (exit 2 when a migration fails, as Vault). */
import { flag, type CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';

export const migrate: CommandSpec = {
  words: ['operator', 'migrate'],
  summary: 'Copy every record from storage_source to storage_destination (no server may run on the source)',
  flags: [
    flag(
      '--config <file>',
      'migration config (HCL): storage_source "<type>" { ... } and storage_destination "<type>" { ... }',
      { required: true },
    ),
    flag('--start <prefix>', 'copy only keys sorting at or after this one (resume a halted run)'),
    flag('--reset', 'remove a stale migration lock from the source and exit'),
    flag('--max-parallel <n>', 'records copied at once (default 10)', { parse: (v) => Number(v) }),
  ],
  examples: ['keyhold operator migrate -config migrate.hcl', 'keyhold operator migrate -config migrate.hcl -reset'],
  async run(inv) {
    const opts = inv.opts as { config: string; start?: string; reset?: boolean; maxParallel?: number };
    const { loadMigrationConfig, migrate: run, MigrationError } = await import('../../../server/migrate.js');
    if (opts.maxParallel !== undefined && !(Number.isInteger(opts.maxParallel) && opts.maxParallel >= 1))
      throw new LocalError('-max-parallel must be a positive integer');
    let cfg;
    try {
      cfg = loadMigrationConfig(opts.config);
    } catch (e) {
      throw new LocalError((e as Error).message);
    }
    try {
      const n = await run(cfg, {
        start: opts.start,
        reset: opts.reset,
        maxParallel: opts.maxParallel,
        log: (l) => inv.io.stderr.write(l + '\n'),
      });
      if (opts.reset) inv.success('Success! Migration lock reset (if it was set).');
      else inv.success(`Success! All of the keys have been migrated (${n} records).`);
    } catch (e) {
      if (!(e instanceof MigrationError) && !(e as Error)?.message?.startsWith('storage unavailable')) throw e;
      // Vault's exit code for a failed migration is 2.
      inv.io.stderr.write(`Error migrating: ${(e as Error).message}\n`);
      return 2;
    }
  },
};
