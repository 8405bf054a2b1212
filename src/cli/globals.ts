/** The program's name, description and global options (commander reads them anywhere on the line). */
import type { FlagSpec } from './command.js';
import { COMMAND_FORMATS, FORMATS } from './output.js';

export const PROGRAM = 'keyhold';

export const PROGRAM_SUMMARY = 'keyhold: a local key-management service (Vault-compatible transit, KV v2, secret sync)';

/** `-v, --version` (commander's version option). */
export const VERSION_FLAG: FlagSpec = { flags: '-v, --version', help: 'output the version number' };

/** Options every command takes. */
export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  {
    flags: '--address <addr>',
    help: 'daemon address: unix:///path or http(s)://host:port (env KEYHOLD_ADDR, VAULT_ADDR)',
  },
  { flags: '--token <token>', help: 'token (env KEYHOLD_TOKEN, VAULT_TOKEN, or saved by `keyhold login`)' },
  {
    flags: '--format <format>',
    help: 'output format (dotenv/shell: keyhold env; jwk/jwks/pem: transit keys export public-key)',
    choices: [...FORMATS, ...COMMAND_FORMATS],
  },
  { flags: '--field <name>', help: 'print only this field of the response, raw, without newline' },
  {
    flags: '--wrap-ttl <duration>',
    help: 'wrap the response in a single-use token living this long, e.g. 60s (env VAULT_WRAP_TTL); read it once with `keyhold unwrap`',
  },
];
