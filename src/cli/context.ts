/** Shared CLI plumbing: global options, stdin and value helpers, the daemon client of a command line. */
import { readFileSync } from 'node:fs';
import { Client, LocalError } from './client.js';
import { withSpinner } from './tty.js';
import { printData } from './output.js';
import type { GlobalOptions, IO } from './command.js';

export type { GlobalOptions } from './command.js';

/**
 * Thrown after a wrapped answer was printed: the command's own output is skipped (the data is in
 * the wrapping token's cubbyhole) and the CLI exits 0.
 */
export class WrappedAnswer extends Error {}

/** The Vault CLI's view of a wrapped answer (command/format.go: wrapping_token, ...). */
export function wrapInfoView(w: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    wrapping_token: w.token,
    wrapping_accessor: w.accessor,
    wrapping_token_ttl: w.ttl,
    wrapping_token_creation_time: w.creation_time,
    wrapping_token_creation_path: w.creation_path,
  };
  if (w.wrapped_accessor) out.wrapped_accessor = w.wrapped_accessor;
  return out;
}

/** Read one line from a TTY without echoing it (Ctrl-C aborts with exit 1). */
export function readHidden(
  prompt: string,
  input: NodeJS.ReadStream = process.stdin,
  out: NodeJS.WriteStream = process.stderr,
): Promise<string> {
  return new Promise((resolve, reject) => {
    out.write(prompt);
    let value = '';
    input.setRawMode?.(true);
    input.resume();
    input.setEncoding('utf8');
    const done = (err?: Error) => {
      input.off('data', onData);
      input.setRawMode?.(false);
      input.pause();
      out.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done();
        if (ch === '\u0003') return done(new LocalError('interrupted'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    input.on('data', onData);
  });
}

let stdinCache: Promise<Buffer> | null = null;

/** Read stdin fully (once). */
export function readStdin(): Promise<Buffer> {
  stdinCache ??= new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks)));
    process.stdin.on('error', reject);
  });
  return stdinCache;
}

/** The value helpers every command uses: stdin, `@file`/`-` values, `k=v` pairs, secrets. */
export interface ValueHelpers {
  /** All of stdin as bytes. */
  stdin(): Promise<Buffer>;
  /** Resolve a value that may be `@file` or `-` (stdin). */
  valueOf(v: string): Promise<string>;
  /** `k=v`, `k=@file`, `k=-` (stdin) pairs to an object. */
  parsePairs(pairs: string[]): Promise<Record<string, unknown>>;
  /** A secret from stdin: typed without echo after `prompt` on a TTY, else all of piped stdin (trimmed). */
  secret(prompt: string): Promise<string>;
}

/** A JSON object given as the whole request body (stdin or a file), or a clear error naming where it came from. */
function jsonObject(text: string, from: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new LocalError(`failed to parse JSON input from ${from}: ${(e as Error).message}`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new LocalError(`JSON input from ${from} must be an object`);
  return v as Record<string, unknown>;
}

/** The value helpers reading stdin through `io` (the process's stdin by default). */
export function createContext(
  io: Pick<IO, 'stdin' | 'stdinIsTTY'> = { stdin: readStdin, stdinIsTTY: Boolean(process.stdin.isTTY) },
): ValueHelpers {
  const valueOf = async (v: string): Promise<string> => {
    if (v === '-') return (await io.stdin()).toString('utf8').replace(/\r?\n$/, '');
    if (v.startsWith('@')) {
      try {
        return readFileSync(v.slice(1), 'utf8');
      } catch (e) {
        throw new LocalError(`cannot read ${v.slice(1)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
    }
    return v;
  };
  return {
    secret: async (prompt) =>
      io.stdinIsTTY ? (await readHidden(prompt)).trim() : (await io.stdin()).toString('utf8').trim(),
    stdin: () => io.stdin(),
    valueOf,
    parsePairs: async (pairs) => {
      const out: Record<string, unknown> = {};
      for (const p of pairs) {
        // As `vault write PATH -` / `vault write PATH @data.json`: a whole JSON object, merged in.
        if (p === '-' || (p.startsWith('@') && !p.includes('='))) {
          Object.assign(out, jsonObject(await valueOf(p), p === '-' ? 'stdin' : p.slice(1)));
          continue;
        }
        const i = p.indexOf('=');
        if (i <= 0) throw new LocalError(`expected key=value, got "${p}"`);
        const k = p.slice(0, i);
        const raw = p.slice(i + 1);
        const v = await valueOf(raw);
        // Values that are JSON objects/arrays pass through structured (like `vault write`).
        if ((v.startsWith('{') && v.endsWith('}')) || (v.startsWith('[') && v.endsWith(']'))) {
          try {
            out[k] = JSON.parse(v);
            continue;
          } catch {
            /* keep as string */
          }
        }
        if (k in out) out[k] = ([] as unknown[]).concat(out[k], v);
        else out[k] = v;
      }
      return out;
    },
  };
}

/** The daemon client of a command line: --address/--token, a spinner on a terminal, wrapped answers printed. */
export function daemonClient(g: GlobalOptions, io: IO): Client {
  const client = new Client({ address: g.address, token: g.token, wrapTtl: g.wrapTtl });
  // On a terminal, a spinner appears when the daemon takes longer than 250 ms to answer.
  const request = client.request.bind(client);
  client.request = async (method, path, body, opts) => {
    const res = await withSpinner(`waiting for keyhold (${method} ${path.split('?')[0]})`, () =>
      request(method, path, body, opts),
    );
    const w = (res.body as { wrap_info?: Record<string, unknown> | null } | undefined)?.wrap_info;
    if (w) {
      // As the vault CLI (a wrapped answer, or a rewrap): the wrapping token is the answer (json: the whole envelope).
      await printData(
        g.format === 'json' || g.format === 'yaml' ? res.body : wrapInfoView(w),
        { format: g.format, field: g.field },
        (s) => io.stdout.write(s),
      );
      throw new WrappedAnswer('wrapped');
    }
    return res;
  };
  return client;
}
