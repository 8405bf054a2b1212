/**
 * The agent's log: one line per event on stderr, `2026-01-02T03:04:05.000Z [INFO]  agent.auth: ...`,
 * in Vault's shape. Never given a token or a secret value: callers log paths, names and statuses.
 */
export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export class AgentLog {
  constructor(
    private readonly min: Level = 'info',
    private readonly out: (line: string) => void = (l) => process.stderr.write(l),
  ) {}
  private line(level: Level, who: string, msg: string): void {
    if (ORDER[level] < ORDER[this.min]) return;
    this.out(`${new Date().toISOString()} [${level.toUpperCase()}]${' '.repeat(6 - level.length)}${who}: ${msg}\n`);
  }
  debug(who: string, msg: string): void {
    this.line('debug', who, msg);
  }
  info(who: string, msg: string): void {
    this.line('info', who, msg);
  }
  warn(who: string, msg: string): void {
    this.line('warn', who, msg);
  }
  error(who: string, msg: string): void {
    this.line('error', who, msg);
  }
}

/** A level from a config's log_level or VAULT_LOG_LEVEL (trace counts as debug). */
export function levelOf(v: string | undefined): Level {
  const s = (v ?? '').toLowerCase();
  if (s === 'trace' || s === 'debug') return 'debug';
  if (s === 'warn' || s === 'warning') return 'warn';
  if (s === 'error' || s === 'err') return 'error';
  return 'info';
}
