/**
 * Log levels that change at runtime and a tap for sys/monitor (Vault's sys/loggers and sys/monitor).
 * The daemon's loggers are named ("core" for the core, "storage", "seal"); each has a level, the
 * configured one until sys/loggers changes it (and a DELETE puts it back). A monitor sees lines at
 * its own level, whatever the loggers' levels are (Vault's monitor works so too), in keyhold's JSON
 * or in a one-line text form. Lines are built only when a logger's level or a monitor wants them.
 */
import type { Logger } from './context.js';

/** Levels, lowest first. */
export const LOG_LEVELS = { debug: 10, info: 20, warn: 30, error: 40, off: 100 } as const;
/** A level name. */
export type Level = keyof typeof LOG_LEVELS;

/** One log record, as a monitor receives it. */
export interface LogRecord {
  time: string;
  level: Exclude<Level, 'off'>;
  logger: string;
  msg: string;
  fields?: Record<string, unknown>;
}

interface Named {
  level: Level;
  min: number;
}

interface Monitor {
  min: number;
  send(rec: LogRecord): void;
  end(): void;
}

/** Parse a level name as sys/loggers and sys/monitor take it ("warning" is Vault's alias of warn); null when unknown. */
export function levelOf(name: string): Level | null {
  const n = name.trim().toLowerCase();
  if (n === 'warning') return 'warn';
  return Object.hasOwn(LOG_LEVELS, n) ? (n as Level) : null;
}

/** The daemon's named loggers, their levels, and the monitors listening. */
export class LogControl {
  private readonly named = new Map<string, Named>();
  private readonly monitors = new Set<Monitor>();
  /** Lowest level any monitor wants (Infinity: none). */
  private monitorMin = Infinity;

  constructor(
    /** The configured level (log_level / --log-level); DELETE sys/loggers returns to it. */
    readonly baseLevel: Level = 'info',
    private readonly write: (line: string) => void = (l) => process.stderr.write(l),
  ) {}

  /** The logger called `name` (created at the configured level on first use). */
  logger(name: string): Logger {
    let state = this.named.get(name);
    if (!state) this.named.set(name, (state = { level: this.baseLevel, min: LOG_LEVELS[this.baseLevel] }));
    const s = state;
    const emit = (level: Exclude<Level, 'off'>) => (msg: string, fields?: Record<string, unknown>) => {
      const n = LOG_LEVELS[level];
      if (n < s.min && n < this.monitorMin) return;
      const time = new Date().toISOString();
      if (n >= s.min)
        this.write(
          JSON.stringify(
            name === 'core' ? { time, level, msg, ...fields } : { time, level, logger: name, msg, ...fields },
          ) + '\n',
        );
      if (n >= this.monitorMin) {
        const rec: LogRecord = { time, level, logger: name, msg, fields };
        for (const m of this.monitors) if (n >= m.min) m.send(rec);
      }
    };
    return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
  }

  /** Every logger's level (sys/loggers). */
  levels(): Record<string, Level> {
    return Object.fromEntries(
      [...this.named.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, v.level]),
    );
  }

  has(name: string): boolean {
    return this.named.has(name);
  }

  /** Set one logger's level, or every logger's (name null). */
  setLevel(name: string | null, level: Level): void {
    for (const [k, v] of this.named) {
      if (name !== null && k !== name) continue;
      v.level = level;
      v.min = LOG_LEVELS[level];
    }
  }

  /** Back to the configured level: one logger, or all (name null). */
  reset(name: string | null): void {
    this.setLevel(name, this.baseLevel);
  }

  /** Listen to every line at `level` or above until the returned function is called (`end`: the daemon is stopping). */
  monitor(level: Level, send: (rec: LogRecord) => void, end: () => void = () => {}): () => void {
    const m: Monitor = { min: LOG_LEVELS[level], send, end };
    this.monitors.add(m);
    this.recompute();
    return () => {
      this.monitors.delete(m);
      this.recompute();
    };
  }

  /** End every monitor (the daemon is stopping: their streams must not hold the shutdown). */
  closeMonitors(): void {
    const all = [...this.monitors];
    this.monitors.clear();
    this.recompute();
    for (const m of all) m.end();
  }

  /** Number of monitors attached. */
  get monitorCount(): number {
    return this.monitors.size;
  }

  private recompute(): void {
    let min = Infinity;
    for (const m of this.monitors) if (m.min < min) min = m.min;
    this.monitorMin = min;
  }
}

/** A record as sys/monitor's "standard" format prints it (Vault's text lines): time [LEVEL] logger: msg key=value ... */
export function standardLine(r: LogRecord): string {
  let line = `${r.time} [${r.level.toUpperCase()}] ${r.logger}: ${r.msg}`;
  if (r.fields)
    for (const [k, v] of Object.entries(r.fields))
      line += ` ${k}=${typeof v === 'string' ? (/\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v)}`;
  return line + '\n';
}

/** A record as sys/monitor's "json" format prints it (one JSON object per line, keyhold's log shape). */
export function jsonLine(r: LogRecord): string {
  return JSON.stringify({ time: r.time, level: r.level, logger: r.logger, msg: r.msg, ...r.fields }) + '\n';
}
