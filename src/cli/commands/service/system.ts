/** What `keyhold service` runs: systemctl/launchctl as child processes, the unit file written atomically. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { LocalError } from '../../errors.js';
import { managerOf, type ServiceManager } from '../../service.js';

/** Output of one systemctl/launchctl call. */
export interface Ran {
  ok: boolean;
  out: string;
  err: string;
}

export function run(cmd: string, args: string[]): Ran {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });
  if (r.error)
    return {
      ok: false,
      out: '',
      err: (r.error as NodeJS.ErrnoException).code === 'ENOENT' ? `${cmd} not found` : r.error.message,
    };
  return { ok: r.status === 0, out: (r.stdout ?? '').trim(), err: (r.stderr ?? '').trim() };
}

export function firstLine(r: Ran): string {
  return (r.err || r.out).split('\n')[0] ?? '';
}

export function manager(): ServiceManager {
  const m = managerOf(process.platform);
  if (!m) throw new LocalError(`keyhold service supports Linux (systemd) and macOS (launchd), not ${process.platform}`);
  return m;
}

export function uid(): number {
  return process.getuid?.() ?? 0;
}

/** Write `text` to `file` through a temporary file and a rename (never half a unit). */
export function writeAtomically(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o644 });
  renameSync(tmp, file);
}

/** The Unix socket a config file sets, when it names one (a JSON config; see docs/server.md). */
export function configSocket(config: string): string | undefined {
  try {
    const c = JSON.parse(readFileSync(config, 'utf8')) as { listeners?: { type?: string; path?: string }[] };
    return c.listeners?.find((l) => l.type === 'unix' && typeof l.path === 'string')?.path;
  } catch {
    return undefined; // the daemon reports a bad config file itself, naming the key
  }
}
