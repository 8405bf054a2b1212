/** Entry point: argv -> CLI; `keyhold server` starts the daemon. Exit 0 ok, 1 local/usage error, 2 server error. */
import { CommanderError } from 'commander';
import { buildProgram } from './cli/program.js';
import { LocalError, ServerError } from './cli/client.js';
import { paint } from './cli/output.js';
import { errorLine } from './cli/error-line.js';

export { errorLine };

/**
 * The global `-v/--version` flag would swallow a subcommand's own `--version N` (commander reads
 * global options anywhere). After the first word, `--version N` is therefore passed on as
 * `--version=N`, which only an option taking a value accepts (`kv get`, `secrets enable`).
 */
export function joinVersionValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    if (a === '--version' && i > 0 && next !== undefined && !next.startsWith('-') && argv.slice(0, i).some((w) => !w.startsWith('-'))) {
      out.push(`--version=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** Vault spells long flags with one dash (`operator migrate -config f.hcl`); these are taken as `--config`. */
const VAULT_SINGLE_DASH = /^-(config|start|reset|max-parallel)(=.*)?$/;

/** `-config x` -> `--config x` for the Vault-style flags above (commander would read `-c -o -n ...`). */
export function vaultFlags(argv: string[]): string[] {
  return argv.map((a) => (VAULT_SINGLE_DASH.test(a) ? '-' + a : a));
}

/** Run the CLI with `argv` (without node and script). */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(joinVersionValues(vaultFlags(argv)), { from: 'user' });
  } catch (e) {
    process.exitCode = exitCodeOf(e);
    if (e instanceof CommanderError) return; // commander already printed the usage error (one line)
    const c = paint(process.stderr);
    process.stderr.write(c.red(errorLine(e)) + '\n');
  }
}

/** Map an error to the documented exit status. */
export function exitCodeOf(e: unknown): number {
  if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 1;
  if (e instanceof ServerError) return 2;
  if (e instanceof LocalError) return 1;
  return 1;
}
