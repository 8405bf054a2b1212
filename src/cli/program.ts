/** The CLI program: global options, then every command of the list (src/cli/commands/index.ts). */
import { Command, Option } from 'commander';
import { COMMAND_FORMATS, FORMATS, paint } from './output.js';
import { COMMANDS } from './commands/index.js';
import { applyExamples } from '../docs/examples.js';
import { VERSION } from '../version.js';
import { installConfirmations } from './confirmations.js';
import { mountAll, type AdapterDeps } from './commander-adapter.js';
import { processIO } from './invocation.js';

/** `error: unknown command 'x'` -> `Error: unknown command 'x' (see keyhold --help)`, one line. */
export function usageErrorLine(str: string): string {
  const msg = str.replace(/^error:\s*/i, '').split('\n').map((s) => s.trim()).filter(Boolean).join(' ');
  return paint(process.stderr).red(`Error: ${msg} (see keyhold --help)`) + '\n';
}

/** Build the commander program (usage errors throw CommanderError; settings are inherited by subcommands). */
export function buildProgram(deps: AdapterDeps = { io: processIO() }): Command {
  const program = new Command('keyhold')
    .description('keyhold: a local key-management service (Vault-compatible transit, KV v2, secret sync)')
    .version(VERSION, '-v, --version')
    .option('--address <addr>', 'daemon address: unix:///path or http(s)://host:port (env KEYHOLD_ADDR, VAULT_ADDR)')
    .option('--token <token>', 'token (env KEYHOLD_TOKEN, VAULT_TOKEN, or saved by `keyhold login`)')
    .addOption(new Option('--format <format>', 'output format (dotenv/shell: keyhold env; jwk/jwks/pem: transit keys export public-key)').choices([...FORMATS, ...COMMAND_FORMATS]))
    .option('--field <name>', 'print only this field of the response, raw, without newline')
    .option('--wrap-ttl <duration>', 'wrap the response in a single-use token living this long, e.g. 60s (env VAULT_WRAP_TTL); read it once with `keyhold unwrap`')
    .enablePositionalOptions(false)
    // Usage errors: one line on stderr naming the cause, exit 1 (main.ts maps the CommanderError).
    .exitOverride()
    .configureOutput({ outputError: (str, write) => write(usageErrorLine(str)) });
  // Our own `help` command (topics as well as commands) replaces commander's.
  program.helpCommand(false);
  mountAll(program, COMMANDS, deps);
  // The examples table for every command's --help that has none of its own (src/docs/examples.ts).
  applyExamples(program);
  installConfirmations(program);
  return program;
}
