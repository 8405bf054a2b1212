/** `keyhold monitor`: stream the daemon's log lines (sys/monitor) until interrupted, like `vault monitor`. */
import type { Command } from 'commander';
import { Client, LocalError } from '../client.js';
import type { CliContext } from '../context.js';

const LEVELS = ['debug', 'info', 'warn', 'error'];

/** Register the monitor command. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('monitor')
    .description("Stream the daemon's log lines (needs sudo on sys/monitor)")
    .option('--log-level <level>', `lowest level shown: ${LEVELS.join(', ')}`, 'info')
    .option('--log-format <format>', 'standard or json', 'standard')
    .addHelpText('after', '\nExamples:\n  $ keyhold monitor\n  $ keyhold monitor --log-level=debug --log-format=json')
    .action(async (o: { logLevel: string; logFormat: string }, cmd: Command) => {
      const level = o.logLevel.toLowerCase();
      if (!LEVELS.includes(level)) throw new LocalError(`--log-level: must be one of ${LEVELS.join(', ')}`);
      if (o.logFormat !== 'standard' && o.logFormat !== 'json')
        throw new LocalError('--log-format: must be standard or json');
      const qs = new URLSearchParams({ log_level: level, log_format: o.logFormat });
      process.stderr.write(`Streaming logs at ${level} and above (Ctrl-C to stop)...\n`);
      // A plain client: the CLI's usual one shows a spinner while waiting for an answer, and this one never ends.
      const g = ctx.globals(cmd);
      const client = new Client({ address: g.address, token: g.token });
      await client.request('GET', `sys/monitor?${qs}`, undefined, { onChunk: (c) => process.stdout.write(c) });
    });
}
