/** The one-line error the CLI prints on stderr. */
import { ServerError } from './errors.js';

/** One line for stderr: `Error: <cause>` (+ HTTP status and request for server errors). */
export function errorLine(e: unknown): string {
  const msg = (e instanceof Error ? e.message : String(e))
    .split('\n')
    .map((s) => s.trim().replace(/^\*\s*/, ''))
    .filter((s) => s && !/^\d+ errors? occurred:$/.test(s))
    .join(' ');
  let where = '';
  if (e instanceof ServerError) where = ` (HTTP ${e.status}${e.where ? `: ${e.where}` : ''})`;
  return `Error: ${msg}${where}`;
}
