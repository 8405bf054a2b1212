/** JSON-lines logger to stderr with levels; callers never pass secrets. */
import type { Logger } from './context.js';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, off: 100 } as const;
/** Log level names. */
export type LogLevel = keyof typeof LEVELS;

/** Create a logger writing JSON lines to `write` (stderr by default). */
export function createLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const min = LEVELS[level] ?? LEVELS.info;
  const log = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }) + '\n');
  };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}
