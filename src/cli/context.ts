/** Shared CLI plumbing handed to every command module. */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { Client, LocalError } from './client.js';
import { printData, type Format } from './output.js';

/** Global options every command sees. */
export interface GlobalOptions {
  address?: string;
  token?: string;
  format?: Format;
  field?: string;
}

/** What command modules use: a client, printing, stdin and value helpers. */
export interface CliContext {
  /** Global options of the running command. */
  globals(cmd: Command): GlobalOptions;
  client(cmd: Command): Client;
  print(cmd: Command, data: unknown): Promise<void>;
  /** All of stdin as bytes. */
  stdin(): Promise<Buffer>;
  /** `k=v`, `k=@file`, `k=-` (stdin) pairs to an object. */
  parsePairs(pairs: string[]): Promise<Record<string, unknown>>;
  /** Resolve a value that may be `@file` or `-` (stdin). */
  valueOf(v: string): Promise<string>;
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

/** Build the context. */
export function createContext(): CliContext {
  const globals = (cmd: Command): GlobalOptions => cmd.optsWithGlobals() as GlobalOptions;
  const valueOf = async (v: string): Promise<string> => {
    if (v === '-') return (await readStdin()).toString('utf8').replace(/\r?\n$/, '');
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
    globals,
    client: (cmd) => {
      const g = globals(cmd);
      return new Client({ address: g.address, token: g.token });
    },
    print: (cmd, data) => {
      const g = globals(cmd);
      return printData(data, { format: g.format, field: g.field });
    },
    stdin: readStdin,
    valueOf,
    parsePairs: async (pairs) => {
      const out: Record<string, unknown> = {};
      for (const p of pairs) {
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
