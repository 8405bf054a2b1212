/**
 * `keyhold agent -config FILE` (Vault Agent: auto-auth, sinks, templates, exec, API proxy and cache;
 * docs/agent.md) and `keyhold agent generate-config -type=env-template -path=secret/app FILE`.
 * The agent's code (src/agent/) loads by dynamic import, only when these commands run.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { LocalError } from '../client.js';
import { tokenFile } from '../../framework/paths.js';

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function register(program: Command, ctx: CliContext): void {
  const agent = program
    .command('agent')
    .description('Run an agent that logs in by itself, renders secrets into files, runs a program with them and proxies API calls (Vault Agent configs)')
    .option('--config <file>', 'agent configuration, HCL or JSON; a directory loads its .hcl and .json files (repeatable)', collect)
    .option('--log-level <level>', 'trace, debug, info, warn or error (default: the config\'s log_level, else info)')
    .option('--exit-after-auth', 'exit once auto-auth has written its first token (as exit_after_auth = true)')
    .addHelpText('after', '\nExamples:\n  $ keyhold agent -config agent.hcl\n  $ keyhold agent -config base.hcl -config templates.hcl\n\nSee docs/agent.md.')
    .action(async (o: { config?: string[]; logLevel?: string; exitAfterAuth?: boolean }) => {
      const { runAgent } = await import('../../agent/run-agent.js');
      try {
        process.exitCode = await runAgent({ configs: o.config ?? [], logLevel: o.logLevel, exitAfterAuth: o.exitAfterAuth });
      } catch (e) {
        throw new LocalError((e as Error).message);
      }
    });

  agent
    .command('generate-config')
    .description('Write an agent configuration (env_template per secret field, exec, token_file auto-auth) for KV paths')
    .argument('[file]', 'where to write it (refused when it exists)', 'agent.hcl')
    .option('--type <type>', 'kind of configuration: env-template')
    .option('--path <path>', 'a KV path (secret/app), or every secret under one (secret/app/*); repeatable', collect)
    .option('--exec <command>', 'the command exec runs (default: env)')
    .addHelpText('after', '\nExamples:\n  $ keyhold agent generate-config -type=env-template -path=secret/app -exec="./app --serve" agent.hcl')
    .action(async (file: string, o: { type?: string; path?: string[]; exec?: string }, c: Command) => {
      if (!o.type) throw new LocalError('-type is required (env-template)');
      const client = ctx.client(c);
      const { generateConfig, writeConfig } = await import('../../agent/generate-config.js');
      const { Upstream } = await import('../../agent/upstream.js');
      const up = new Upstream({ address: client.address, tlsSkipVerify: false, numRetries: 0 });
      try {
        const text = await generateConfig(up, client.token ?? '', { type: o.type, paths: o.path ?? [], exec: o.exec, address: client.address, tokenFilePath: tokenFile() });
        writeConfig(file, text);
      } catch (e) {
        throw new LocalError((e as Error).message);
      }
      process.stdout.write(`Successfully generated "${file}" configuration file!\n`);
    });
}
