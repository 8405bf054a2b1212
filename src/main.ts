/** Entry point: argv -> CLI; `keyhold server` starts the daemon. Exit 0 ok, 1 local/usage error, 2 server error. */
import { CommanderError } from 'commander';
import { buildProgram } from './cli/program.js';
import { LocalError, ServerError } from './cli/client.js';

/** Run the CLI with `argv` (without node and script). */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  program.exitOverride();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    process.exitCode = exitCodeOf(e);
    if (e instanceof CommanderError) return; // commander already printed help or the usage error
    const msg = e instanceof Error ? e.message : String(e);
    process.stderr.write(`Error: ${msg.split('\n').filter(Boolean).join(' ')}\n`);
  }
}

/** Map an error to the documented exit status. */
export function exitCodeOf(e: unknown): number {
  if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 1;
  if (e instanceof ServerError) return 2;
  if (e instanceof LocalError) return 1;
  return 1;
}
