/**
 * `keyhold run [--env-file FILE] [--watch] -- COMMAND [ARGS...]` and `keyhold env` (issue 17 part 1),
 * the habit of `op run`, `doppler run` and `envconsul`: environment values that are references
 * (`keyhold://MOUNT/PATH#FIELD[?version=N]`) are resolved from KV in one batch and handed to COMMAND
 * in its environment. Secret values never go to argv, keyhold's output or a temporary file.
 * COMMAND's exit status is keyhold's; signals sent to keyhold are passed on to COMMAND. A COMMAND
 * that cannot be found exits 127 and one that cannot be executed 126, as a shell does.
 * `--watch` follows the KV mounts' change events (`GET MOUNT/events`, falling back to re-reading the
 * secrets where the token may not read them) every `--watch-interval` and, after `--debounce`,
 * restarts COMMAND or sends it `--signal`.
 */
import type { ChildProcess } from 'node:child_process';
import { chmodSync, openSync, closeSync, writeSync } from 'node:fs';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { LocalError, ServerError } from '../client.js';
import { RefResolver, findRefs, readDotenv, renderEnv, resolveRefs, type Resolution, type SecretRef } from '../secret-refs.js';
import { parseDuration } from '../../framework/fields.js';
import { exitLike, forwardSignals, signalNamed, startChild, stopChild, type Ending } from '../child-process.js';

interface Sources {
  /** The variables to resolve or pass: the environment, then the env file (file wins). */
  env: Record<string, string>;
  /** Names that came from the env file (keyhold env prints these and every reference). */
  fromFile: Set<string>;
  refs: SecretRef[];
}

function sources(envFile: string | undefined): Sources {
  const file = envFile ? readDotenv(envFile) : {};
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  Object.assign(env, file);
  return { env, fromFile: new Set(Object.keys(file)), refs: findRefs(env) };
}

function durationOpt(name: string) {
  return (v: string): number => {
    try {
      return parseDuration(name, v);
    } catch (e) {
      throw new LocalError((e as Error).message);
    }
  };
}

/** Register `run` and `env`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('run')
    .description('Run COMMAND with keyhold:// references in its environment resolved from KV (values never in argv, output or files)')
    .argument('<command...>', 'the command and its arguments, after --')
    .option('--env-file <file>', 'also read variables (plain or references) from this dotenv file; it wins over the environment')
    .option('--watch', 'restart COMMAND (or send --signal) when a referenced secret changes')
    .option('--signal <name>', 'with --watch: send this signal (e.g. SIGHUP) instead of restarting')
    .option('--watch-interval <duration>', 'with --watch: how often to check for changes (default 2s, at least 1s)', durationOpt('--watch-interval'))
    .option('--debounce <duration>', 'with --watch: wait this long without further change before acting (default 1s)', durationOpt('--debounce'))
    .option('--kill-timeout <duration>', 'with --watch: on restart, SIGKILL after SIGTERM when COMMAND is still running after this (default 10s)', durationOpt('--kill-timeout'))
    .addHelpText(
      'after',
      '\nReferences: keyhold://MOUNT/PATH#FIELD, optionally ?version=N (KV v2). Exit status: COMMAND\'s; 127 when it is not found,\n' +
        '126 when it cannot run; 1/2 when a reference cannot be resolved (COMMAND is not started).\n' +
        '\nExamples:\n  $ DB_PASSWORD=keyhold://secret/app/db#password keyhold run -- ./server\n  $ keyhold run --env-file .env --watch -- node app.js',
    )
    .action(async (command: string[], o: { envFile?: string; watch?: boolean; signal?: string; watchInterval?: number; debounce?: number; killTimeout?: number }, c: Command) => {
      if (o.signal && !o.watch) throw new LocalError('--signal applies with --watch only');
      const signal = o.signal ? signalName(o.signal) : undefined;
      const src = sources(o.envFile);
      const resolver = new RefResolver(ctx.client(c));
      const first = await resolveRefs(resolver, src.refs);
      const status = await supervise(command, src, first, resolver, { watch: Boolean(o.watch), signal, interval: Math.max(1, o.watchInterval ?? 2), debounce: o.debounce ?? 1, killTimeout: o.killTimeout ?? 10 });
      exitLike(status);
    });

  program
    .command('env')
    .description('Print the resolved variables (references and --env-file entries) as dotenv, json or shell; --output writes a 0600 file')
    .option('--env-file <file>', 'also read variables (plain or references) from this dotenv file')
    .option('--output <file>', 'write to this file (created or truncated, mode 0600) instead of stdout')
    .addHelpText('after', '\nFormat: --format dotenv (default), json or shell.\n\nExamples:\n  $ keyhold env --env-file .env.refs --format dotenv --output .env\n  $ keyhold env --env-file .env.refs --format json')
    .action(async (o: { envFile?: string; output?: string }, c: Command) => {
      const format = ctx.globals(c).format ?? 'dotenv';
      if (format !== 'dotenv' && format !== 'json' && format !== 'shell') throw new LocalError(`keyhold env prints --format dotenv, json or shell, not ${format}`);
      const src = sources(o.envFile);
      const { values } = await resolveRefs(new RefResolver(ctx.client(c)), src.refs);
      const vars: Record<string, string> = {};
      for (const k of src.fromFile) vars[k] = src.env[k]!;
      Object.assign(vars, values);
      const text = renderEnv(vars, format);
      if (o.output) writePrivate(o.output, text);
      else process.stdout.write(text);
    });
}

/** Write `text` to `file` with mode 0600 (also when the file existed with a wider mode). */
function writePrivate(file: string, text: string): void {
  let fd: number;
  try {
    fd = openSync(file, 'w', 0o600);
  } catch (e) {
    throw new LocalError(`cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    chmodSync(file, 0o600);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

function signalName(s: string): NodeJS.Signals {
  const name = signalNamed(s);
  if (!name) throw new LocalError(`--signal: unknown signal ${s}`);
  return name;
}

interface SuperviseOptions {
  watch: boolean;
  signal?: NodeJS.Signals;
  /** Seconds. */
  interval: number;
  debounce: number;
  killTimeout: number;
}

/** Start COMMAND (and, with --watch, restart or signal it on change); resolves with how it finally ended. */
function supervise(command: string[], src: Sources, first: Resolution, resolver: RefResolver, o: SuperviseOptions): Promise<Ending> {
  return new Promise((resolveEnding, rejectEnding) => {
    let child: ChildProcess | null = null;
    let restarting = false;
    let stopped = false;
    let timer: NodeJS.Timeout | null = null;
    let current = first;

    const start = (res: Resolution) => {
      const env = { ...src.env, ...res.values };
      const p = startChild(command, env, 'keyhold run', (e, spawnFailed) => {
        if (child !== p) return;
        if (restarting && !spawnFailed) {
          restarting = false;
          start(current);
          return;
        }
        finish(e);
      });
      child = p;
    };

    // The CLI's own SIGINT/SIGTERM handlers (src/cli/signals.ts) end the process at once; while
    // COMMAND runs, keyhold passes signals on and ends as COMMAND ends instead. Restored at the end.
    const restoreSignals = forwardSignals(() => child);

    const finish = (e: Ending) => {
      if (stopped) return;
      stopped = true;
      if (timer) clearTimeout(timer);
      restoreSignals();
      resolveEnding(e);
    };

    const changed = (a: Map<string, string>, b: Map<string, string>) => [...a].some(([k, v]) => b.get(k) !== v);

    // --watch. Per KV v2 mount of an unpinned reference, keyhold follows the mount's change events
    // (GET MOUNT/events with a cursor) and re-reads the secrets only when an event names one of them
    // (or events were lost). A mount whose events the token may not read, and KV v1 mounts, are
    // re-read every interval instead. Either way a change is confirmed by the secrets' versions
    // (v1: a hash), then debounced, then acted on once.
    const feeds = new Map<string, { inner: Set<string>; events: boolean; cursor?: { epoch: string; index: number } }>();
    let firstCheck = true;
    const setUpFeeds = async () => {
      for (const r of src.refs) {
        if (r.version !== undefined) continue;
        const at = await resolver.locate(r);
        const feed = feeds.get(at.mount) ?? { inner: new Set<string>(), events: at.version === 2 };
        feed.inner.add(at.inner);
        feeds.set(at.mount, feed);
      }
    };
    const suspectChange = async (): Promise<boolean> => {
      let suspect = firstCheck; // closes the gap between the first read and the first cursor
      firstCheck = false;
      for (const [mount, feed] of feeds) {
        if (!feed.events) {
          suspect = true;
          continue;
        }
        const mp = mount.split('/').filter(Boolean).map(encodeURIComponent).join('/');
        try {
          const res = await resolver.client.read(`${mp}/events`, { index: String(feed.cursor?.index ?? 0), epoch: feed.cursor?.epoch ?? '' });
          const d = (res.body?.data ?? {}) as { epoch?: string; index?: number; truncated?: boolean; events?: { path: string }[] };
          if (feed.cursor && (d.truncated || (d.events ?? []).some((e) => feed.inner.has(e.path)))) suspect = true;
          feed.cursor = { epoch: String(d.epoch ?? ''), index: Number(d.index ?? 0) };
        } catch (e) {
          if (!(e instanceof ServerError) || ![403, 404, 405].includes(e.status)) throw e;
          feed.events = false;
          suspect = true;
          process.stderr.write(`keyhold run: --watch: cannot read ${mount}events (${e.status}); re-reading its secrets every ${o.interval}s instead\n`);
        }
      }
      return suspect;
    };
    const poll = async () => {
      if (stopped) return;
      try {
        if (feeds.size === 0) await setUpFeeds();
        if (await suspectChange()) {
          const next = await resolveRefs(resolver, src.refs);
          if (changed(current.fingerprints, next.fingerprints)) {
            await new Promise((r) => setTimeout(r, o.debounce * 1000));
            current = await resolveRefs(resolver, src.refs);
            act();
          }
        }
      } catch (e) {
        // A secret gone or access revoked: keep COMMAND running with what it has, say so once per check.
        process.stderr.write(`keyhold run: --watch: ${(e as Error).message}\n`);
      }
      if (!stopped) timer = setTimeout(() => void poll(), o.interval * 1000);
    };

    const act = () => {
      const p = child;
      if (!p || stopped) return;
      if (o.signal) {
        p.kill(o.signal);
        return;
      }
      restarting = true;
      stopChild(p, 'SIGTERM', o.killTimeout);
    };

    try {
      start(current);
    } catch (e) {
      rejectEnding(e);
      return;
    }
    if (o.watch && src.refs.some((r) => r.version === undefined)) timer = setTimeout(() => void poll(), o.interval * 1000);
  });
}
