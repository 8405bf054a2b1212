/**
 * The one shape of a CLI command: a plain value (words, arguments, flags, stdin, examples, `run`).
 * Every command of `keyhold` is such a value, listed in src/cli/commands/index.ts; the commander
 * adapter (commander-adapter.ts) turns the list into the parser, and the completion, man-page and
 * reference generators describe the same list. `run` gets everything it touches through its
 * Invocation (client, stdout/stderr/stdin), so a command is unit-tested with a fake client and no daemon.
 */
import type { Command } from 'commander';
import type { ApiResponse } from './client.js';
import type { Format } from './output.js';
import type { Face } from './face.js';

/** Global options every command sees. */
export interface GlobalOptions {
  address?: string;
  token?: string;
  format?: Format;
  field?: string;
  /** -wrap-ttl: wrap the answer in a single-use token. */
  wrapTtl?: string;
  /** -detailed as a global flag (the vault face: vault's lists take it anywhere on the line). */
  detailed?: boolean;
}

/** What a command may ask of the daemon: the methods of src/cli/client.ts's Client. */
export interface ApiClient {
  /** The token sent (login swaps it). */
  token: string | undefined;
  request(
    method: string,
    path: string,
    body?: unknown,
    opts?: { allowStatus?: number[]; headers?: Record<string, string> },
  ): Promise<ApiResponse>;
  read(path: string, query?: Record<string, string>): Promise<ApiResponse>;
  write(path: string, body: unknown): Promise<ApiResponse>;
  list(path: string): Promise<ApiResponse>;
  delete(path: string, query?: Record<string, string>): Promise<ApiResponse>;
}

/** A stream a command writes to (process.stdout/stderr, or a buffer in tests). */
export interface OutStream {
  write(data: string | Uint8Array, cb?: (err?: Error | null) => void): boolean;
  isTTY?: boolean;
}

/** The command's view of the terminal. */
export interface IO {
  stdout: OutStream;
  stderr: OutStream;
  /** All of stdin as bytes (read once). */
  stdin(): Promise<Buffer>;
  /** Whether stdin is a terminal (secrets are then typed without echo). */
  stdinIsTTY: boolean;
}

/** A positional argument. */
export interface ArgSpec {
  name: string;
  help?: string;
  /** `<name>` (default) or `[name]`. */
  optional?: boolean;
  variadic?: boolean;
  choices?: readonly string[];
  default?: unknown;
}

/** A flag. */
export interface FlagSpec {
  /** As written on the command line: `--key-version <n>`, `-y, --yes`, `--no-start`, `--watch [seconds]`. */
  flags: string;
  help: string;
  default?: unknown;
  choices?: readonly string[];
  /** Turn the text into the value (`previous` is the earlier value of a repeated flag). */
  parse?: (value: string, previous: never) => unknown;
  /** The command does not run without it. */
  required?: boolean;
  /** Left out of help and docs. */
  hidden?: boolean;
  /** API field the flag sets (flags derived from a route's declared fields, see route-flags.ts). */
  field?: string;
}

/** A value read from the parsed command line: a string, list, boolean, number or absent. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Values = Record<string, any>;

/** Everything `run` receives. */
export interface Invocation {
  /** Positional arguments by name (`<name>` -> args.name; variadic ones are arrays). */
  args: Values;
  /** Flag values by attribute name (`--key-version` -> opts.keyVersion). */
  opts: Values;
  /** The global options (--address, --token, --format, --field, --wrap-ttl). */
  globals: GlobalOptions;
  /** The daemon client (built on first use from --address/--token). */
  readonly client: ApiClient;
  io: IO;
  /** Print data on stdout per --format/--field. */
  print(data: unknown): Promise<void>;
  /**
   * Print a whole answer as the vault CLI does: the envelope for json/yaml, auth and wrap fields for
   * --field (secret-output.ts); keyhold's table (of `data`, default the answer's data) otherwise.
   */
  printSecret(body: unknown, data?: unknown): Promise<void>;
  /** Which program the user ran: `keyhold`, or `vault` (the vault CLI's face). */
  face: Face;
  /** One warning line on stderr (the vault face accepts what keyhold refuses, and says why it is risky). */
  warn(message: string): void;
  /** A `Success! ...` note (green on a terminal): on stderr, or on stdout in the vault face as vault prints it. */
  success(message: string): void;
  /** Resolve a value that may be `@file` or `-` (stdin). */
  valueOf(v: string): Promise<string>;
  /** `k=v`, `k=@file`, `k=-` pairs to an object. */
  parsePairs(pairs: string[]): Promise<Record<string, unknown>>;
  /** A secret: typed without echo after `prompt` on a terminal, else all of piped stdin (trimmed). */
  secret(prompt: string): Promise<string>;
  /** The root of the parsed program (commands that describe the CLI itself read it). */
  root: Command;
}

/** A command: one verb. */
export interface CommandSpec {
  /** Words after `keyhold`: ['transit', 'encrypt']. */
  words: readonly string[];
  summary: string;
  args?: readonly ArgSpec[];
  flags?: readonly FlagSpec[];
  /** What the command reads from stdin, when it does (shown in help). */
  stdin?: string;
  /** Text shown in --help before the examples. */
  notes?: string;
  /** `keyhold ...` lines shown in --help, man pages and the reference. */
  examples?: readonly string[];
  hidden?: boolean;
  /**
   * Destructive: the question asked on a terminal before running (from the positional arguments);
   * the command gets `-y, --yes`, and a declined prompt exits 1 with nothing changed.
   */
  confirm?: (args: string[]) => string;
  /** Pass unknown flags through as arguments (`__complete`). */
  passThrough?: boolean;
  /** Runs the command; a number is the exit status (0 when nothing is returned). */
  run(inv: Invocation): Promise<number | void> | number | void;
}

/** A noun that groups verbs (`transit`, `transit keys`). */
export interface GroupSpec {
  words: readonly string[];
  summary: string;
  aliases?: readonly string[];
  group: true;
}

/** An entry of the command list. */
export type Entry = CommandSpec | GroupSpec;

/** Whether an entry is a group. */
export function isGroup(e: Entry): e is GroupSpec {
  return (e as GroupSpec).group === true;
}

/** A group entry. */
export function group(words: string, summary: string, aliases?: string[]): GroupSpec {
  return { words: words.split(' '), summary, aliases, group: true };
}

/** Positional argument helpers: `arg('name', 'help')` is required, `optArg` optional. */
export function arg(name: string, help?: string, more: Omit<ArgSpec, 'name' | 'help'> = {}): ArgSpec {
  return { name, help, ...more };
}
export function optArg(name: string, help?: string, more: Omit<ArgSpec, 'name' | 'help' | 'optional'> = {}): ArgSpec {
  return { name, help, optional: true, ...more };
}

/** A flag. */
export function flag(flags: string, help: string, more: Omit<FlagSpec, 'flags' | 'help'> = {}): FlagSpec {
  return { flags, help, ...more };
}

/** A repeatable flag's values as a list. */
export const collect = (v: string, prev: string[] = []): string[] => [...prev, v];
