/**
 * `keyhold agent -config FILE` (Vault Agent: auto-auth, sinks, templates, exec, API proxy and cache;
 * docs/agent.md). The agent's code (src/agent/) loads by dynamic import, only when it runs.
 */
import { collect, flag, type CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';

export const agent: CommandSpec = {
  words: ['agent'],
  summary:
    'Run an agent that logs in by itself, renders secrets into files, runs a program with them and proxies API calls (Vault Agent configs)',
  flags: [
    flag(
      '--config <file>',
      'agent configuration, HCL or JSON; a directory loads its .hcl and .json files (repeatable)',
      { parse: collect },
    ),
    flag('--log-level <level>', "trace, debug, info, warn or error (default: the config's log_level, else info)"),
    flag('--exit-after-auth', 'exit once auto-auth has written its first token (as exit_after_auth = true)'),
  ],
  notes: 'Vault Agent configurations run unchanged; VAULT_ADDR overrides vault.address. See docs/agent.md.',
  examples: ['keyhold agent -config agent.hcl', 'keyhold agent -config base.hcl -config templates.hcl'],
  async run(inv) {
    const o = inv.opts as { config?: string[]; logLevel?: string; exitAfterAuth?: boolean };
    const { runAgent } = await import('../../../agent/run-agent.js');
    try {
      return await runAgent({ configs: o.config ?? [], logLevel: o.logLevel, exitAfterAuth: o.exitAfterAuth });
    } catch (e) {
      throw new LocalError((e as Error).message);
    }
  },
};
