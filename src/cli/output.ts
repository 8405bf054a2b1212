/** CLI output: --format table|json|yaml|raw and --field NAME (raw value, no newline). Data to stdout only. */
import { Chalk } from 'chalk';
import { LocalError } from './client.js';
import { scalar, table } from './table.js';

export { table };

/** Output formats every command takes. */
export const FORMATS = ['table', 'json', 'yaml', 'raw'] as const;
/**
 * Formats only some commands take (`keyhold env`: dotenv, shell; `transit keys export public-key`:
 * jwk, jwks, pem). They share the global --format option: commander reads a program-level option
 * anywhere on the line, so a command cannot declare its own --format.
 */
export const COMMAND_FORMATS = ['dotenv', 'shell', 'jwk', 'jwks', 'pem'] as const;
/** One of FORMATS or COMMAND_FORMATS. */
export type Format = (typeof FORMATS)[number] | (typeof COMMAND_FORMATS)[number];

/** Whether colour may be used on this stream: a TTY, NO_COLOR unset or empty (no-color.org), TERM not dumb. */
export function useColor(stream: { isTTY?: boolean } = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
}

/** Colour functions for a stream; plain text when `useColor` says no. */
export function paint(
  stream: { isTTY?: boolean } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): { red(s: string): string; green(s: string): string; bold(s: string): string; dim(s: string): string } {
  const level = useColor(stream, env) ? 1 : 0;
  const c = new Chalk({ level });
  return { red: (s) => c.red(s), green: (s) => c.green(s), bold: (s) => c.bold(s), dim: (s) => c.dim(s) };
}

/** Print a success note on stderr (green on a TTY), as `vault` does: `Success! ...`. */
export function success(message: string): void {
  process.stderr.write(paint(process.stderr).green(message) + '\n');
}

/** Render rows as an aligned table with headers. */
export function grid(headers: string[], rows: string[][]): string {
  const w = headers.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (r[i] ?? '').replace(/\x1b\[[0-9;]*m/g, '').length)),
  );
  const pad = (s: string, i: number) => s + ' '.repeat(Math.max(0, w[i]! - s.replace(/\x1b\[[0-9;]*m/g, '').length));
  const out = [
    headers.map(pad).join('    ').trimEnd(),
    headers
      .map((h, i) => '-'.repeat(w[i]!))
      .map(pad)
      .join('    ')
      .trimEnd(),
  ];
  for (const r of rows) out.push(r.map(pad).join('    ').trimEnd());
  return out.join('\n') + '\n';
}

/** Print `data` per format; `--field` prints one raw value without newline. */
export async function printData(
  data: unknown,
  opts: { format?: Format; field?: string },
  write: (s: string | Buffer) => void = (s) => process.stdout.write(s),
): Promise<void> {
  if (opts.field) {
    const obj = (data ?? {}) as Record<string, unknown>;
    const v = opts.field
      .split('.')
      .reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
    if (v === undefined) throw new LocalError(`field "${opts.field}" not present in the response`);
    write(typeof v === 'string' ? v : JSON.stringify(v));
    return;
  }
  switch (opts.format ?? 'table') {
    case 'json':
      write(JSON.stringify(data, null, 2) + '\n');
      return;
    case 'yaml': {
      const { stringify } = await import('yaml');
      write(stringify(data));
      return;
    }
    case 'raw':
      write(typeof data === 'string' ? data : JSON.stringify(data));
      return;
    case 'table':
      if (Array.isArray(data)) write(data.map(scalar).join('\n') + (data.length ? '\n' : ''));
      else if (isKeyList(data))
        write(['Keys', '----', ...data.keys.map(scalar)].join('\n') + '\n'); // a LIST answer, as `vault list` prints it
      else if (data && typeof data === 'object') write(table(data as Record<string, unknown>));
      else write(scalar(data) + '\n');
      return;
    default:
      throw new LocalError(`--format ${opts.format} does not apply to this command (use ${FORMATS.join(', ')})`);
  }
}

/** A LIST answer: `{keys: [...]}` and nothing else. */
function isKeyList(data: unknown): data is { keys: unknown[] } {
  return (
    Boolean(data) &&
    typeof data === 'object' &&
    Object.keys(data as object).length === 1 &&
    Array.isArray((data as { keys?: unknown }).keys)
  );
}
