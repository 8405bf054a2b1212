/** `keyhold env`: the resolved variables (references and --env-file entries) as dotenv, json or shell. */
import { flag, type CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';
import { RefResolver, renderEnv, resolveRefs } from '../../secret-refs.js';
import { sources, writePrivate } from './sources.js';

export const env: CommandSpec = {
  words: ['env'],
  summary:
    'Print the resolved variables (references and --env-file entries) as dotenv, json or shell; --output writes a 0600 file',
  flags: [
    flag('--env-file <file>', 'also read variables (plain or references) from this dotenv file'),
    flag('--output <file>', 'write to this file (created or truncated, mode 0600) instead of stdout'),
  ],
  notes: 'Format: --format dotenv (default), json or shell.',
  examples: [
    'keyhold env --env-file .env.refs --format dotenv --output .env',
    'keyhold env --env-file .env.refs --format json',
  ],
  async run(inv) {
    const format = inv.globals.format ?? 'dotenv';
    if (format !== 'dotenv' && format !== 'json' && format !== 'shell')
      throw new LocalError(`keyhold env prints --format dotenv, json or shell, not ${format}`);
    const src = sources(inv.opts.envFile);
    const { values } = await resolveRefs(new RefResolver(inv.client), src.refs);
    const vars: Record<string, string> = {};
    for (const k of src.fromFile) vars[k] = src.env[k]!;
    Object.assign(vars, values);
    const text = renderEnv(vars, format);
    if (inv.opts.output) writePrivate(inv.opts.output, text);
    else inv.io.stdout.write(text);
  },
};
