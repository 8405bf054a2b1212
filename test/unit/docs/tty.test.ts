import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalError } from '../../../src/cli/client.js';
import { exitCodeOf } from '../../../src/main.js';
import {
  addYesOption,
  colors,
  confirm,
  confirmCommand,
  confirmOrAbort,
  meter,
  formatBytes,
  formatRate,
  isInteractive,
  progressBar,
  spinner,
  withSpinner,
} from '../../../src/cli/tty.js';

/** A fake stream that records writes. */
function fakeStream(isTTY: boolean, columns = 100) {
  const writes: string[] = [];
  return { isTTY, columns, writes, write: (s: string) => (writes.push(s), true), text: () => writes.join('') };
}
const TTY_ENV = { TERM: 'xterm-256color' } as NodeJS.ProcessEnv;

afterEach(() => vi.useRealTimers());

describe('isInteractive and colors', () => {
  it('is true only on a TTY without NO_COLOR and with a capable TERM', () => {
    expect(isInteractive(fakeStream(true), TTY_ENV)).toBe(true);
    expect(isInteractive(fakeStream(false), TTY_ENV)).toBe(false);
    expect(isInteractive(fakeStream(true), { ...TTY_ENV, NO_COLOR: '' })).toBe(false);
    expect(isInteractive(fakeStream(true), { ...TTY_ENV, NO_COLOR: '1' })).toBe(false);
    expect(isInteractive(fakeStream(true), { TERM: 'dumb' })).toBe(false);
  });

  it('colours on a TTY and prints plain text on a pipe or with NO_COLOR', () => {
    expect(colors({ stream: fakeStream(true), env: TTY_ENV }).red('x')).toBe('\x1b[31mx\x1b[39m');
    expect(colors({ stream: fakeStream(false), env: TTY_ENV }).red('x')).toBe('x');
    expect(colors({ stream: fakeStream(true), env: { ...TTY_ENV, NO_COLOR: '1' } }).red('x')).toBe('x');
  });
});

describe('formatting sizes', () => {
  it('formats bytes and throughput in binary units', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(100 * 1024 * 1024)).toBe('100 MiB');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GiB');
    expect(formatRate(2 * 1024 * 1024)).toBe('2.0 MiB/s');
  });
});

describe('progressBar', () => {
  it('draws nothing on a pipe or with NO_COLOR, whatever is ticked', () => {
    for (const [s, env] of [
      [fakeStream(false), TTY_ENV],
      [fakeStream(true), { ...TTY_ENV, NO_COLOR: '1' }],
    ] as const) {
      const p = progressBar({ stream: s, env, total: 100 });
      p.tick(50);
      p.update(100);
      p.done('finished');
      expect(p.active).toBe(false);
      expect(s.writes).toEqual([]);
    }
  });

  it('shows percentage, sizes, throughput and ETA on a TTY, throttled, then clears', () => {
    let t = 0;
    const s = fakeStream(true);
    const p = progressBar({
      stream: s,
      env: TTY_ENV,
      total: 4 * 1024 * 1024,
      label: 'encrypt',
      now: () => t,
      intervalMs: 100,
    });
    t = 1000;
    p.tick(1024 * 1024);
    expect(s.writes.at(-1)).toMatch(/^\r\x1b\[2Kencrypt \[#+\.+\]  25% 1\.0 MiB\/4\.0 MiB 1\.0 MiB\/s ETA 3s$/);
    const n = s.writes.length;
    t = 1050; // within the interval: no redraw
    p.tick(1);
    expect(s.writes.length).toBe(n);
    t = 2000;
    p.update(4 * 1024 * 1024);
    expect(s.writes.at(-1)).toContain('100%');
    expect(s.writes.at(-1)).not.toContain('ETA');
    p.done('done: 4.0 MiB');
    expect(s.writes.slice(-2)).toEqual(['\r\x1b[2K', 'done: 4.0 MiB\n']);
  });

  it('counts items without a total', () => {
    let t = 0;
    const s = fakeStream(true);
    const p = progressBar({ stream: s, env: TTY_ENV, unit: 'items', label: 'sync', now: () => t });
    t = 2000;
    p.tick(10);
    expect(s.writes.at(-1)).toBe('\r\x1b[2Ksync 10 5/s');
  });
});

describe('spinner', () => {
  it('stays silent on a pipe', async () => {
    const s = fakeStream(false);
    const r = await withSpinner('waiting', async () => 42, { stream: s, env: TTY_ENV, delayMs: 0 });
    expect(r).toBe(42);
    expect(s.writes).toEqual([]);
  });

  it('appears only after the delay and erases itself', () => {
    vi.useFakeTimers();
    const s = fakeStream(true);
    const sp = spinner('waiting for the daemon', { stream: s, env: TTY_ENV, delayMs: 200, intervalMs: 50 });
    vi.advanceTimersByTime(150);
    expect(s.writes).toEqual([]);
    vi.advanceTimersByTime(160);
    expect(s.writes.length).toBeGreaterThanOrEqual(2);
    expect(s.writes[0]).toMatch(/^\r\x1b\[2K. waiting for the daemon$/);
    sp.stop();
    expect(s.writes.at(-1)).toBe('\r\x1b[2K');
    const n = s.writes.length;
    vi.advanceTimersByTime(500);
    expect(s.writes.length).toBe(n);
  });

  it('never draws when the work ends before the delay', async () => {
    const s = fakeStream(true);
    await withSpinner('quick', async () => undefined, { stream: s, env: TTY_ENV, delayMs: 10_000 });
    expect(s.writes).toEqual([]);
  });

  it('stops even when the work throws', async () => {
    vi.useFakeTimers();
    const s = fakeStream(true);
    const p = withSpinner(
      'x',
      async () => {
        vi.advanceTimersByTime(300);
        throw new Error('boom');
      },
      { stream: s, env: TTY_ENV, delayMs: 100 },
    );
    await expect(p).rejects.toThrow('boom');
    expect(s.writes.at(-1)).toBe('\r\x1b[2K');
  });
});

describe('confirm', () => {
  const ttyInput = () => Object.assign(new PassThrough(), { isTTY: true });

  it('returns true without asking with --yes', async () => {
    const out = fakeStream(true);
    expect(await confirm('Delete?', { yes: true, input: ttyInput(), output: out })).toBe(true);
    expect(out.writes).toEqual([]);
  });

  it('does not prompt (and proceeds) when stdin or stderr is not a terminal', async () => {
    const out = fakeStream(false);
    expect(
      await confirm('Delete?', { input: Object.assign(new PassThrough(), { isTTY: false }), output: fakeStream(true) }),
    ).toBe(true);
    expect(await confirm('Delete?', { input: ttyInput(), output: out })).toBe(true);
    expect(out.writes).toEqual([]);
  });

  it('asks on a terminal and accepts y or yes only', async () => {
    for (const [answer, want] of [
      ['y\n', true],
      ['YES\n', true],
      ['n\n', false],
      ['\n', false],
      ['yep\n', false],
    ] as const) {
      const input = ttyInput();
      const out = fakeStream(true);
      const p = confirm('Delete key app?', { input, output: out });
      input.write(answer);
      expect(await p).toBe(want);
      expect(out.text()).toBe('Delete key app? [y/N] ');
    }
  });

  it('treats end of input as no', async () => {
    const input = ttyInput();
    const p = confirm('Delete?', { input, output: fakeStream(true) });
    input.end();
    expect(await p).toBe(false);
  });

  it('confirmOrAbort throws a local error (exit 1) when declined', async () => {
    const input = ttyInput();
    const p = confirmOrAbort('Delete?', { input, output: fakeStream(true) });
    input.write('n\n');
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LocalError);
    expect(exitCodeOf(err)).toBe(1);
    expect((err as Error).message).toBe('aborted: nothing was changed');
  });

  it('addYesOption adds -y, --yes once', () => {
    const c = new Command('x');
    addYesOption(addYesOption(c));
    expect(c.options.filter((o) => o.long === '--yes')).toHaveLength(1);
    c.parse(['-y'], { from: 'user' });
    expect(c.opts().yes).toBe(true);
  });
});

describe('confirmCommand and meter', () => {
  it('confirmCommand skips the question when the command got --yes', async () => {
    const c = new Command('x').option('-y, --yes', 'skip');
    c.parse(['--yes'], { from: 'user' });
    const out = fakeStream(true);
    await confirmCommand(c, 'Delete?', { input: Object.assign(new PassThrough(), { isTTY: true }), output: out });
    expect(out.writes).toEqual([]);
  });

  it('confirmCommand asks without --yes and aborts on no', async () => {
    const c = new Command('x').option('-y, --yes', 'skip');
    c.parse([], { from: 'user' });
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const p = confirmCommand(c, 'Delete?', { input, output: fakeStream(true) });
    input.write('no\n');
    await expect(p).rejects.toBeInstanceOf(LocalError);
  });

  it('meter passes bytes through unchanged and counts them', async () => {
    let t = 0;
    const s = fakeStream(true);
    const progress = progressBar({ stream: s, env: TTY_ENV, total: 6, now: () => (t += 1000), intervalMs: 0 });
    const m = meter(progress);
    const got: Buffer[] = [];
    m.on('data', (c: Buffer) => got.push(c));
    m.write(Buffer.from('abc'));
    m.end(Buffer.from('def'));
    await new Promise((r) => m.on('end', r));
    expect(Buffer.concat(got).toString()).toBe('abcdef');
    expect(s.writes.at(-1)).toContain('100%');
  });
});
