/**
 * Interactive polish for people at a terminal: colours, a progress bar with throughput, a spinner
 * while waiting for the daemon, and confirmation prompts. Everything is a no-op off a TTY, with
 * NO_COLOR set or TERM=dumb (design note section 5), so pipes and scripts see only the data.
 * Progress and spinners draw on stderr; stdout stays for data.
 */
import { Chalk, type ChalkInstance } from 'chalk';
import { createInterface } from 'node:readline';
import { Transform } from 'node:stream';
import type { Command } from 'commander';
import { LocalError } from './client.js';

/** A stream we may draw on (process.stderr in real use, a fake in tests). */
export interface TtyStream {
  isTTY?: boolean;
  columns?: number;
  write(chunk: string): boolean;
}

/** Where polish helpers draw and what environment they read. */
export interface TtyOptions {
  stream?: TtyStream;
  env?: NodeJS.ProcessEnv;
}

/** Whether `stream` is a terminal where colour and progress may be shown (not with NO_COLOR or TERM=dumb). */
export function isInteractive(stream: TtyStream = process.stderr, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && env.NO_COLOR === undefined && env.TERM !== 'dumb';
}

/** A chalk instance that colours only when `stream` is interactive (defaults to stdout). */
export function colors(opts: TtyOptions = {}): ChalkInstance {
  const stream = opts.stream ?? process.stdout;
  return new Chalk({ level: isInteractive(stream, opts.env) ? 1 : 0 });
}

/** `1536` -> `1.5 KiB`. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** Bytes per second as `12 MiB/s`. */
export function formatRate(bytesPerSecond: number): string {
  return `${formatBytes(Math.max(0, Math.round(bytesPerSecond)))}/s`;
}

/** A progress display; every method is safe to call when nothing is drawn. */
export interface Progress {
  /** Add `n` units (bytes or items) done. */
  tick(n: number): void;
  /** Set the total done so far. */
  update(done: number): void;
  /** Finish: clear the bar and print a one-line summary (on a TTY only). */
  done(summary?: string): void;
  /** Whether anything is drawn at all. */
  readonly active: boolean;
}

/** Options of a progress bar. */
export interface ProgressOptions extends TtyOptions {
  /** Total units when known (bytes of a file, items of a batch); without it the bar shows only counts. */
  total?: number;
  label?: string;
  /** `bytes` formats counts and throughput as sizes; `items` as plain numbers. */
  unit?: 'bytes' | 'items';
  /** Clock in milliseconds (tests). */
  now?: () => number;
  /** Minimum time between redraws. */
  intervalMs?: number;
}

const NOOP_PROGRESS: Progress = { tick() {}, update() {}, done() {}, active: false };

/** A progress bar with throughput and ETA on stderr: `label [#####.....] 52% 24 MiB/48 MiB 96 MiB/s ETA 1s`. */
export function progressBar(opts: ProgressOptions = {}): Progress {
  const stream = opts.stream ?? process.stderr;
  if (!isInteractive(stream, opts.env)) return NOOP_PROGRESS;
  const now = opts.now ?? (() => Date.now());
  const interval = opts.intervalMs ?? 100;
  const fmt = (n: number) => (opts.unit === 'items' ? String(n) : formatBytes(n));
  const rate = (r: number) => (opts.unit === 'items' ? `${Math.round(r)}/s` : formatRate(r));
  const start = now();
  let doneUnits = 0;
  let last = -Infinity;
  let drawn = false;
  const line = (): string => {
    const secs = Math.max((now() - start) / 1000, 1e-3);
    const r = doneUnits / secs;
    const parts = [opts.label ?? ''];
    if (opts.total && opts.total > 0) {
      const frac = Math.min(1, doneUnits / opts.total);
      const width = Math.max(10, Math.min(30, (stream.columns ?? 80) - 60));
      const full = Math.round(frac * width);
      parts.push(
        `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`,
        `${Math.floor(frac * 100)}%`.padStart(4),
        `${fmt(doneUnits)}/${fmt(opts.total)}`,
      );
      parts.push(rate(r));
      if (r > 0 && frac < 1) parts.push(`ETA ${Math.ceil((opts.total - doneUnits) / r)}s`);
    } else parts.push(fmt(doneUnits), rate(r));
    return parts.filter(Boolean).join(' ');
  };
  const draw = (force: boolean) => {
    const t = now();
    if (!force && t - last < interval) return;
    last = t;
    stream.write(`\r\x1b[2K${line()}`);
    drawn = true;
  };
  return {
    active: true,
    tick(n) {
      doneUnits += n;
      draw(false);
    },
    update(d) {
      doneUnits = d;
      draw(false);
    },
    done(summary) {
      if (drawn) stream.write('\r\x1b[2K');
      if (summary) stream.write(summary + '\n');
    },
  };
}

/** A running spinner. */
export interface Spinner {
  /** Stop and erase it; `message` (when given) stays as a line. */
  stop(message?: string): void;
  readonly active: boolean;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** Options of a spinner. */
export interface SpinnerOptions extends TtyOptions {
  /** Show only after this delay, so quick answers never flicker (default 250 ms). */
  delayMs?: number;
  intervalMs?: number;
}

/** A spinner on stderr, drawn only on an interactive terminal. */
export function spinner(label: string, opts: SpinnerOptions = {}): Spinner {
  const stream = opts.stream ?? process.stderr;
  if (!isInteractive(stream, opts.env)) return { stop() {}, active: false };
  let frame = 0;
  let drawn = false;
  let timer: NodeJS.Timeout | undefined;
  const draw = () => {
    stream.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${label}`);
    drawn = true;
  };
  const delay = setTimeout(() => {
    draw();
    timer = setInterval(draw, opts.intervalMs ?? 80);
    timer.unref();
  }, opts.delayMs ?? 250);
  delay.unref();
  return {
    active: true,
    stop(message) {
      clearTimeout(delay);
      if (timer) clearInterval(timer);
      if (drawn) stream.write('\r\x1b[2K');
      if (message && drawn) stream.write(message + '\n');
    },
  };
}

/** Run `work` with a spinner that appears only if it takes longer than the delay. */
export async function withSpinner<T>(label: string, work: () => Promise<T>, opts: SpinnerOptions = {}): Promise<T> {
  const s = spinner(label, opts);
  try {
    return await work();
  } finally {
    s.stop();
  }
}

/** Options of a confirmation prompt. */
export interface ConfirmOptions {
  /** `--yes` given: proceed without asking. */
  yes?: boolean;
  input?: NodeJS.ReadableStream & { isTTY?: boolean };
  output?: TtyStream;
  env?: NodeJS.ProcessEnv;
}

/**
 * Ask `question [y/N]` on a terminal; true for y/yes. With `yes`, or when stdin or stderr is not a
 * terminal (scripts, pipes, CI), it proceeds without asking: scripts keep working unchanged.
 */
export async function confirm(question: string, opts: ConfirmOptions = {}): Promise<boolean> {
  if (opts.yes) return true;
  const input = opts.input ?? process.stdin;
  const output = opts.output ?? process.stderr;
  if (!input.isTTY || !output.isTTY) return true;
  const rl = createInterface({ input, output: output as NodeJS.WritableStream, terminal: false });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.once('close', () => resolve(''));
      output.write(`${question} [y/N] `);
      rl.once('line', resolve);
    });
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    rl.close();
  }
}

/** Add `-y, --yes` to a destructive command (skips the confirmation prompt). */
export function addYesOption(cmd: Command): Command {
  if (!cmd.options.some((o) => o.long === '--yes')) cmd.option('-y, --yes', 'do not ask for confirmation');
  return cmd;
}

/** Confirm or stop the command with a local error (exit 1) when the person declines. */
export async function confirmOrAbort(question: string, opts: ConfirmOptions = {}): Promise<void> {
  if (!(await confirm(question, opts))) throw new LocalError('aborted: nothing was changed');
}

/** Ask before a destructive command unless its `--yes` was given; a declined prompt exits 1. */
export async function confirmCommand(
  cmd: Command,
  question: string,
  opts: Omit<ConfirmOptions, 'yes'> = {},
): Promise<void> {
  const yes = Boolean((cmd.optsWithGlobals() as { yes?: boolean }).yes);
  await confirmOrAbort(question, { ...opts, yes });
}

/** A pass-through stream that ticks `progress` with the bytes flowing through it (pipe file streams through it). */
export function meter(progress: Progress): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      progress.tick(chunk.length);
      done(null, chunk);
    },
  });
}
