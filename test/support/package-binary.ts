/**
 * Test support for the single executable (issue 26): build dist/bin/keyhold-linux-x64 once per run
 * and reuse it. `scripts/package.mjs --if-stale` rebuilds only when dist/ (or the packaging inputs)
 * changed since the last build (a hash kept beside the executable); a lock folder stops two test
 * files building it at the same time. scripts/test.sh builds it before the suite, so in `npm test`
 * this only checks the stamp.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './daemon.js';

/** The executable `npm run package` builds. */
export const EXECUTABLE = join(ROOT, 'dist', 'bin', 'keyhold-linux-x64');

/** Why the executable cannot exist on this machine, or null. */
export function executableUnsupported(): string | null {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    return `the executable is built for linux-x64 only (this is ${process.platform}-${process.arch})`;
  return null;
}

/** The Debian package `npm run package:deb` builds. */
export const DEB = join(
  ROOT,
  'dist',
  `keyhold_${(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version}_amd64.deb`,
);

/** Build the executable if missing or stale (waits for another process building it); returns its path. */
export async function ensureExecutable(): Promise<string> {
  await underLock(() =>
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'package.mjs'), '--if-stale'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 600_000,
    }),
  );
  if (!existsSync(EXECUTABLE)) throw new Error(`${EXECUTABLE} was not built`);
  return EXECUTABLE;
}

/** Build the executable and the .deb if missing or stale; returns the .deb's path. */
export async function ensureDeb(): Promise<string> {
  await ensureExecutable();
  await underLock(() =>
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'package-deb.mjs'), '--if-stale'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 600_000,
    }),
  );
  if (!existsSync(DEB)) throw new Error(`${DEB} was not built`);
  return DEB;
}

/** Run `fn` holding dist/.package-lock (one builder at a time across test processes). */
async function underLock(fn: () => unknown): Promise<void> {
  const lock = join(ROOT, 'dist', '.package-lock');
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  for (let i = 0; ; i++) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock older than 10 minutes was left by a killed run.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // gone meanwhile
      }
      if (i > 1200) throw new Error('timed out waiting for another process building the executable');
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
