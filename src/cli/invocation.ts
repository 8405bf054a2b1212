/** Build the Invocation a command's `run` receives: parsed values, the IO, helpers and a lazy client. */
import type { Command } from 'commander';
import type { ApiClient, GlobalOptions, IO, Invocation, Values } from './command.js';
import { createContext, daemonClient, readStdin } from './context.js';
import { paint, printData } from './output.js';
import { printSecret } from './secret-output.js';
import type { Face } from './face.js';

/** The process's own terminal. */
export function processIO(): IO {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: readStdin,
    get stdinIsTTY() {
      return Boolean(process.stdin.isTTY);
    },
  };
}

/** How a command line gets its daemon client (tests pass a fake). */
export type ClientFactory = (globals: GlobalOptions, io: IO) => ApiClient;

/** What an invocation is made of. */
export interface InvocationParts {
  args: Values;
  opts: Values;
  globals: GlobalOptions;
  io: IO;
  root: Command;
  makeClient?: ClientFactory;
  face?: Face;
}

/** An Invocation over `parts`; the client is built on first use. */
export function makeInvocation(parts: InvocationParts): Invocation {
  const { io, globals } = parts;
  const face = parts.face ?? 'keyhold';
  const write = (s: string | Buffer) => io.stdout.write(s);
  const values = createContext(io);
  const makeClient = parts.makeClient ?? daemonClient;
  let client: ApiClient | undefined;
  return {
    args: parts.args,
    opts: parts.opts,
    globals,
    io,
    root: parts.root,
    get client() {
      client ??= makeClient(globals, io);
      return client;
    },
    face,
    print: (data) => printData(data, { format: globals.format, field: globals.field }, write),
    printSecret: (body, data) =>
      printSecret(body, {
        face,
        format: globals.format,
        field: globals.field,
        write,
        keyhold: () =>
          printData(
            data !== undefined ? data : ((body as { data?: unknown } | null)?.data ?? body),
            { format: globals.format },
            write,
          ),
      }),
    warn: (message) => {
      io.stderr.write(paint(io.stderr).red(`WARNING! ${message}`) + '\n');
    },
    // keyhold keeps stdout for data and notes on stderr; vault's UI.Output/Info write to stdout.
    success: (message) => {
      const to = face === 'vault' ? io.stdout : io.stderr;
      to.write(paint(to).green(message) + '\n');
    },
    valueOf: values.valueOf,
    parsePairs: values.parsePairs,
    secret: values.secret,
  };
}
