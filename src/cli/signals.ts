/**
 * Pipes and signals for the CLI, as Unix tools behave.
 *
 * - A reader that goes away (`keyhold ... | head`, `grep -q`, a closed pager) makes the next write to
 *   stdout or stderr fail with EPIPE. git and gh are killed by SIGPIPE then (git keeps the default
 *   action; Go programs die by SIGPIPE on a broken fd 1 or 2), which a shell reports as 141. Node
 *   ignores SIGPIPE and turns the failed write into an 'error' event (an "Unhandled 'error' event"
 *   stack trace when nobody listens), so the CLI ends quietly with the same 141 instead.
 * - Ctrl-C (SIGINT) ends the CLI with 130 (128 + SIGINT, what the shell shows for a process killed by
 *   it) and SIGTERM with 143, after removing partial output files registered with `onInterrupt`.
 * `keyhold server` does not use these: the daemon has its own graceful shutdown.
 */

/** Exit status of a process ended by SIGPIPE, as a shell reports git's and gh's (128 + 13). */
export const EXIT_SIGPIPE = 141;
/** Exit status after Ctrl-C (128 + SIGINT). */
export const EXIT_SIGINT = 130;
/** Exit status after SIGTERM (128 + 15). */
export const EXIT_SIGTERM = 143;

const cleanups = new Set<() => void>();
let installed = false;

function runCleanups(): void {
  for (const c of [...cleanups]) {
    try {
      c();
    } catch {
      // Best effort: the process is ending; a cleanup that fails must not hide the others.
    }
  }
  cleanups.clear();
}

/** Install the CLI's EPIPE and signal handling once per process (idempotent). */
export function installCliProcessHooks(): void {
  if (installed) return;
  installed = true;
  const onStreamError = (which: 'stdout' | 'stderr') => (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') {
      runCleanups();
      process.exit(EXIT_SIGPIPE);
    }
    // An error handed to destroy() by a stream pipeline writing to stdout (a failed decryption, an
    // error answer of the daemon) is the pipeline's to report: it has no syscall.
    if (e.syscall === undefined) return;
    // A failed write of another kind (EIO on a vanished terminal, ENOSPC on a redirect) ends the CLI
    // as a local error, saying so on stderr unless stderr is what failed.
    runCleanups();
    if (which === 'stdout') process.stderr.write(`Error: cannot write output: ${e.code ?? e.message}\n`);
    process.exit(1);
  };
  process.stdout.on('error', onStreamError('stdout'));
  process.stderr.on('error', onStreamError('stderr'));
  // Only when nobody else handles the signal: `keyhold run` forwards SIGINT and SIGTERM to its command
  // and ends as the command does.
  const onSignal = (status: number) => (signal: NodeJS.Signals) => {
    if (process.listenerCount(signal) > 1) return;
    runCleanups();
    process.exit(status);
  };
  process.on('SIGINT', onSignal(EXIT_SIGINT));
  process.on('SIGTERM', onSignal(EXIT_SIGTERM));
}

/**
 * Run `cleanup` (synchronously: the process ends right after) if the CLI is interrupted or its
 * output pipe closes before the returned function is called. Used to remove partial output files.
 */
export function onInterrupt(cleanup: () => void): () => void {
  cleanups.add(cleanup);
  return () => {
    cleanups.delete(cleanup);
  };
}
