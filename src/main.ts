/** Entry point: argv -> CLI; `keyhold server` starts the daemon. Exit 0 ok, 1 local/usage error, 2 server error. */
import { CommanderError } from 'commander';
import { buildProgram } from './cli/program.js';
import { vaultStyleFlags } from './cli/commands/core.js';
import { LocalError, ServerError } from './cli/client.js';
import { paint } from './cli/output.js';
import { errorLine } from './cli/error-line.js';
import { WrappedAnswer } from './cli/context.js';
import { installCliProcessHooks } from './cli/signals.js';

export { errorLine };

/**
 * The global `-v/--version` flag would swallow a subcommand's own `--version N` (commander reads
 * global options anywhere). After the first word, `--version N` is therefore passed on as
 * `--version=N`, which only an option taking a value accepts (`kv get`, `secrets enable`).
 */
export function joinVersionValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i]!;
    if (a === '--') {
      // Everything after -- belongs to another program (keyhold run -- COMMAND ARGS).
      out.push(...argv.slice(i));
      break;
    }
    // The vault CLI's single-dash `-wrap-ttl=60s` / `-wrap-ttl 60s` is accepted as `--wrap-ttl`.
    if (a === '-wrap-ttl' || a.startsWith('-wrap-ttl=')) a = '-' + a;
    const next = argv[i + 1];
    if (a === '--version' && i > 0 && next !== undefined && !next.startsWith('-') && argv.slice(0, i).some((w) => !w.startsWith('-'))) {
      out.push(`--version=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** Run the CLI with `argv` (without node and script). */
export async function main(argv: string[]): Promise<void> {
  // Before anything is written (commander prints --help itself): EPIPE and Ctrl-C end the CLI quietly.
  // The daemon keeps its own graceful shutdown.
  if (argv[0] !== 'server') installCliProcessHooks();
  // The vault CLI's `-version` is the `version` command (`--version`/`-v` print the bare version).
  if (argv.length === 1 && argv[0] === '-version') argv = ['version'];
  const program = buildProgram();
  try {
    await program.parseAsync(joinVersionValues(vaultStyleFlags(argv)), { from: 'user' });
  } catch (e) {
    process.exitCode = exitCodeOf(e);
    if (e instanceof CommanderError) return; // commander already printed the usage error (one line)
    if (e instanceof WrappedAnswer) return; // the wrapping token was printed; exit 0
    const c = paint(process.stderr);
    process.stderr.write(c.red(errorLine(e)) + '\n');
  }
}

/** Map an error to the documented exit status. */
export function exitCodeOf(e: unknown): number {
  if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 1;
  if (e instanceof WrappedAnswer) return 0;
  if (e instanceof ServerError) return 2;
  if (e instanceof LocalError) return 1;
  return 1;
}
