/** `keyhold agent generate-config -type=env-template -path=secret/app FILE`, as `vault agent generate-config`. */
import { collect, flag, optArg, type CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';
import { resolveAddress } from '../../settings.js';
import { tokenFile } from '../../../framework/paths.js';

export const generateConfig: CommandSpec = {
  words: ['agent', 'generate-config'],
  summary: 'Write an agent configuration (env_template per secret field, exec, token_file auto-auth) for KV paths',
  args: [optArg('file', 'where to write it (refused when it exists)', { default: 'agent.hcl' })],
  flags: [
    flag('--type <type>', 'kind of configuration: env-template', { required: true }),
    flag('--path <path>', 'a KV path (secret/app), or every secret under one (secret/app/*); repeatable', {
      parse: collect,
    }),
    flag('--exec <command>', 'the command exec runs (default: env)'),
  ],
  examples: ['keyhold agent generate-config -type=env-template -path=secret/app -exec="./app --serve" agent.hcl'],
  async run(inv) {
    const o = inv.opts as { type: string; path?: string[]; exec?: string };
    const file = String(inv.args.file ?? 'agent.hcl');
    const address = resolveAddress({ address: inv.globals.address });
    const { generateConfig: generate, writeConfig } = await import('../../../agent/generate-config.js');
    const { Upstream } = await import('../../../agent/upstream.js');
    const up = new Upstream({ address, tlsSkipVerify: false, numRetries: 0 }, {});
    try {
      const text = await generate(up, inv.client.token ?? '', {
        type: o.type,
        paths: o.path ?? [],
        exec: o.exec,
        address,
        tokenFilePath: tokenFile(),
      });
      writeConfig(file, text);
    } catch (e) {
      throw new LocalError((e as Error).message);
    }
    inv.io.stdout.write(`Successfully generated "${file}" configuration file!\n`);
  },
};
