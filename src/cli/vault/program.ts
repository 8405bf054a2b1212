/**
 * The `vault` face's program: the vault command list through the same commander adapter, named
 * `vault`, with the vault CLI's connection flags (-ca-cert, -client-cert, -client-key,
 * -tls-skip-verify, ...) and VAULT_FORMAT as the default of -format.
 */
import type { Command } from 'commander';
import { commandWord } from '../argv.js';
import type { FlagSpec, GlobalOptions, IO } from '../command.js';
import { option, type AdapterDeps } from '../commander-adapter.js';
import { daemonClient } from '../context.js';
import { processIO } from '../invocation.js';
import { createProgram } from '../parser.js';
import { LocalError } from '../errors.js';
import { vaultEntriesFor } from './commands/index.js';

/** The vault CLI's global flags keyhold's face does not have. */
export const VAULT_GLOBAL_FLAGS: readonly FlagSpec[] = [
  { flags: '--ca-cert <file>', help: 'CA certificate (PEM) to verify the server with (env VAULT_CACERT)' },
  { flags: '--ca-path <dir>', help: 'accepted; give one file with -ca-cert', hidden: true },
  {
    flags: '--client-cert <file>',
    help: 'client certificate (PEM) for TLS client authentication (env VAULT_CLIENT_CERT)',
  },
  { flags: '--client-key <file>', help: 'private key (PEM) of the client certificate (env VAULT_CLIENT_KEY)' },
  { flags: '--tls-skip-verify', help: 'do not verify the server certificate (env VAULT_SKIP_VERIFY): insecure' },
  {
    flags: '--tls-server-name <name>',
    help: 'server name to verify the certificate against (env VAULT_TLS_SERVER_NAME)',
  },
  { flags: '--namespace <ns>', help: 'accepted; keyhold has one (root) namespace', hidden: true },
  { flags: '--non-interactive', help: 'never prompt' },
  { flags: '--policy-override', help: 'accepted', hidden: true },
  { flags: '--disable-redirects', help: 'accepted', hidden: true },
  { flags: '--detailed', help: 'lists with details (secrets list, auth list, audit list)', hidden: true },
];

interface VaultGlobals extends GlobalOptions {
  caCert?: string;
  clientCert?: string;
  clientKey?: string;
  tlsSkipVerify?: boolean;
  tlsServerName?: string;
}

/** The daemon client, with the connection flags given on the line (they win over the environment). */
export function vaultClient(g: GlobalOptions, io: IO): ReturnType<typeof daemonClient> {
  const v = g as VaultGlobals;
  const env = process.env;
  if (v.caCert) env.KEYHOLD_CACERT = v.caCert;
  if (v.clientCert) env.KEYHOLD_CLIENT_CERT = v.clientCert;
  if (v.clientKey) env.KEYHOLD_CLIENT_KEY = v.clientKey;
  if (v.tlsSkipVerify) env.KEYHOLD_SKIP_VERIFY = 'true';
  if (v.tlsServerName) env.KEYHOLD_TLS_SERVER_NAME = v.tlsServerName;
  return daemonClient(g, io);
}

/** The program that parses a (normalized) `vault ...` command line. */
export async function buildVaultProgramFor(argv: string[], deps: Partial<AdapterDeps> = {}): Promise<Command> {
  const program = createProgram(await vaultEntriesFor(commandWord(argv)), {
    io: processIO(),
    makeClient: vaultClient,
    ...deps,
    face: 'vault',
  });
  program
    .name('vault')
    .description("vault: the vault CLI, served by keyhold (run as `keyhold` for keyhold's own commands)");
  for (const f of VAULT_GLOBAL_FLAGS) program.addOption(option(f));
  // VAULT_FORMAT is -format's default (a -format on the line wins); an unknown value is a usage error.
  const envFormat = process.env.VAULT_FORMAT;
  if (envFormat) {
    const choices = program.options.find((o) => o.long === '--format')?.argChoices ?? [];
    const value = envFormat === 'yml' ? 'yaml' : envFormat;
    if (!choices.includes(value))
      throw new LocalError(
        `VAULT_FORMAT: invalid output format "${envFormat}" (use ${choices.slice(0, 4).join(', ')})`,
      );
    program.setOptionValueWithSource('format', value, 'env');
  }
  return program;
}
