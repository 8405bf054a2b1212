/** `keyhold monitor`: stream the daemon's log lines (sys/monitor) until interrupted, like `vault monitor`. */
import { Client } from '../../client.js';
import { flag, type CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';

const LEVELS = ['debug', 'info', 'warn', 'error'];

export const monitor: CommandSpec = {
  words: ['monitor'],
  summary: "Stream the daemon's log lines (needs sudo on sys/monitor)",
  flags: [
    flag('--log-level <level>', `lowest level shown: ${LEVELS.join(', ')}`, { default: 'info' }),
    flag('--log-format <format>', 'standard or json', { default: 'standard' }),
  ],
  examples: ['keyhold monitor', 'keyhold monitor --log-level=debug --log-format=json'],
  async run(inv) {
    const level = String(inv.opts.logLevel).toLowerCase();
    const format = String(inv.opts.logFormat);
    if (!LEVELS.includes(level)) throw new LocalError(`--log-level: must be one of ${LEVELS.join(', ')}`);
    if (format !== 'standard' && format !== 'json') throw new LocalError('--log-format: must be standard or json');
    const qs = new URLSearchParams({ log_level: level, log_format: format });
    inv.io.stderr.write(`Streaming logs at ${level} and above (Ctrl-C to stop)...\n`);
    // A client of its own: the stream never ends, and each chunk is printed as it arrives.
    const client = new Client({ address: inv.globals.address, token: inv.globals.token });
    await client.request('GET', `sys/monitor?${qs}`, undefined, { onChunk: (c) => inv.io.stdout.write(c) });
  },
};
