/** Entry point: argv -> CLI; `keyhold server` starts the daemon. Exit 0 ok, 1 local/usage error, 2 server error. */
import { CommanderError } from 'commander';
import { buildProgramFor } from './cli/program-for.js';
import { joinVersionValues, normalizeArgv } from './cli/argv.js';
import { LocalError, ServerError } from './cli/client.js';
import { paint } from './cli/output.js';
import { errorLine } from './cli/error-line.js';
import { vaultErrorText } from './cli/vault/error-text.js';
import { WrappedAnswer } from './cli/context.js';
import { installCliProcessHooks } from './cli/signals.js';
import { boolFlagValues } from './cli/bool-values.js';
import type { Face } from './cli/face.js';

export { errorLine, joinVersionValues };

/** The vault face (src/cli/vault/): VAULT_* variables win over KEYHOLD_* ones, then its own command list. */
async function vaultProgram(words: string[]): Promise<import('commander').Command> {
  const [{ applyVaultEnv }, { buildVaultProgramFor }] = await Promise.all([
    import('./cli/vault/env.js'),
    import('./cli/vault/program.js'),
  ]);
  applyVaultEnv();
  return buildVaultProgramFor(words);
}

/** Run the CLI with `argv` (without node and script); `face` vault when started under the name `vault` (bin/keyhold.js). */
export async function main(argv: string[], face: Face = 'keyhold'): Promise<void> {
  // Before anything is written (commander prints --help itself): EPIPE and Ctrl-C end the CLI quietly.
  // The daemon keeps its own graceful shutdown.
  if (argv[0] !== 'server') installCliProcessHooks();
  // The vault CLI's `-version` is the `version` command (`--version`/`-v` print the bare version).
  if (argv.length === 1 && argv[0] === '-version') argv = ['version'];
  const words = normalizeArgv(argv);
  // Only the commands of the first word are loaded (all of them for help or an unknown word).
  try {
    const program = face === 'vault' ? await vaultProgram(words) : await buildProgramFor(words);
    await program.parseAsync(boolFlagValues(program, words), { from: 'user' });
  } catch (e) {
    process.exitCode = exitCodeOf(e);
    if (e instanceof CommanderError) return; // commander already printed the usage error (one line)
    if (e instanceof WrappedAnswer) return; // the wrapping token was printed; exit 0
    const c = paint(process.stderr);
    const text =
      face === 'vault'
        ? vaultErrorText(e, process.env.VAULT_ADDR || process.env.KEYHOLD_ADDR || 'https://127.0.0.1:8200')
        : errorLine(e);
    process.stderr.write(c.red(text) + '\n');
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
