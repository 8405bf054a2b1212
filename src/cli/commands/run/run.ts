/**
 * `keyhold run [--env-file FILE] [--watch] -- COMMAND [ARGS...]` (issue 17 part 1), the habit of
 * `op run`, `doppler run` and `envconsul`: environment values that are references
 * (`keyhold://MOUNT/PATH#FIELD[?version=N]`) are resolved from KV in one batch and handed to COMMAND
 * in its environment. Secret values never go to argv, keyhold's output or a temporary file.
 * COMMAND's exit status is keyhold's; signals sent to keyhold are passed on to COMMAND. A COMMAND
 * that cannot be found exits 127 and one that cannot be executed 126, as a shell does.
 * `--watch` follows the KV mounts' change events (`GET MOUNT/events`, falling back to re-reading the
 * secrets where the token may not read them) every `--watch-interval` and, after `--debounce`,
 * restarts COMMAND or sends it `--signal`.
 */
import { flag, type CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';
import { RefResolver, resolveRefs } from '../../secret-refs.js';
import { durationOpt, sources } from './sources.js';
import { exitLike, signalName, supervise } from './supervise.js';

export const run: CommandSpec = {
  words: ['run'],
  summary:
    'Run COMMAND with keyhold:// references in its environment resolved from KV (values never in argv, output or files)',
  args: [{ name: 'command', help: 'the command and its arguments, after --', variadic: true }],
  flags: [
    flag(
      '--env-file <file>',
      'also read variables (plain or references) from this dotenv file; it wins over the environment',
    ),
    flag('--watch', 'restart COMMAND (or send --signal) when a referenced secret changes'),
    flag('--signal <name>', 'with --watch: send this signal (e.g. SIGHUP) instead of restarting'),
    flag('--watch-interval <duration>', 'with --watch: how often to check for changes (default 2s, at least 1s)', {
      parse: durationOpt('--watch-interval'),
    }),
    flag('--debounce <duration>', 'with --watch: wait this long without further change before acting (default 1s)', {
      parse: durationOpt('--debounce'),
    }),
    flag(
      '--kill-timeout <duration>',
      'with --watch: on restart, SIGKILL after SIGTERM when COMMAND is still running after this (default 10s)',
      { parse: durationOpt('--kill-timeout') },
    ),
  ],
  notes:
    "References: keyhold://MOUNT/PATH#FIELD, optionally ?version=N (KV v2). Exit status: COMMAND's; 127 when it is not found,\n" +
    '126 when it cannot run; 1/2 when a reference cannot be resolved (COMMAND is not started).',
  examples: [
    'DB_PASSWORD=keyhold://secret/app/db#password keyhold run -- ./server',
    'keyhold run --env-file .env --watch -- node app.js',
  ],
  async run(inv) {
    const o = inv.opts as {
      envFile?: string;
      watch?: boolean;
      signal?: string;
      watchInterval?: number;
      debounce?: number;
      killTimeout?: number;
    };
    if (o.signal && !o.watch) throw new LocalError('--signal applies with --watch only');
    const signal = o.signal ? signalName(o.signal) : undefined;
    const src = sources(o.envFile);
    const resolver = new RefResolver(inv.client);
    const first = await resolveRefs(resolver, src.refs);
    const ending = await supervise(inv.args.command, src, first, resolver, {
      watch: Boolean(o.watch),
      signal,
      interval: Math.max(1, o.watchInterval ?? 2),
      debounce: o.debounce ?? 1,
      killTimeout: o.killTimeout ?? 10,
    });
    return exitLike(ending);
  },
};
