/** The CLI program: global options, then each command module registers its commands. */
import { Command, Option } from 'commander';
import { createContext } from './context.js';
import { COMMAND_FORMATS, FORMATS, paint } from './output.js';
import * as core from './commands/core.js';
import * as transit from './commands/transit.js';
import * as kv from './commands/kv.js';
import * as sync from './commands/sync.js';
import * as audit from './commands/audit.js';
import * as managedKeys from './commands/managed-keys.js';
import * as docs from './commands/docs.js';
import * as run from './commands/run.js';
import * as wrapping from './commands/wrapping.js';
import * as auth from './commands/auth.js';
import * as service from './commands/service.js';
import * as agent from './commands/agent.js';
import { VERSION } from '../version.js';
import { installConfirmations } from './confirmations.js';

/** `error: unknown command 'x'` -> `Error: unknown command 'x' (see keyhold --help)`, one line. */
export function usageErrorLine(str: string): string {
  const msg = str.replace(/^error:\s*/i, '').split('\n').map((s) => s.trim()).filter(Boolean).join(' ');
  return paint(process.stderr).red(`Error: ${msg} (see keyhold --help)`) + '\n';
}

/** Build the commander program (usage errors throw CommanderError; settings are inherited by subcommands). */
export function buildProgram(): Command {
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
  const ctx = createContext();
  for (const m of [core, auth, transit, kv, sync, audit, managedKeys, run, agent, wrapping, docs, service]) m.register(program, ctx);
  installConfirmations(program);
  return program;
}
