/**
 * Run CLI command lines in process with a fake daemon client: the program is the real one (the
 * command list through the commander adapter); requests go to a FakeClient that checks each one
 * against what the test expects (method, path) and answers with the given response.
 */
import { expect } from 'vitest';
import { buildProgram } from '../../../src/cli/program.js';
import type { ApiClient, IO } from '../../../src/cli/command.js';
import { ServerError, type ApiResponse } from '../../../src/cli/client.js';
import { exitCodeOf } from '../../../src/main.js';
import { normalizeArgv } from '../../../src/cli/argv.js';

/** One expected request and its answer. */
export interface Exchange {
  method: string;
  path: string;
  /** Answer body (status 200 unless `status`). */
  reply?: Record<string, unknown> | null;
  status?: number;
}

/** A request the command sent. */
export interface SentRequest {
  method: string;
  path: string;
  body: unknown;
  headers?: Record<string, string>;
}

/** A daemon client answering from a script; fails the test on an unexpected request. */
export class FakeClient implements ApiClient {
  token: string | undefined = 'test-token';
  readonly sent: SentRequest[] = [];
  constructor(private readonly script: Exchange[]) {}
  async request(
    method: string,
    path: string,
    body?: unknown,
    opts: { allowStatus?: number[]; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const next = this.script.shift();
    this.sent.push({ method, path, body, headers: opts.headers });
    expect(next, `unexpected request ${method} ${path}`).toBeDefined();
    expect(`${method} ${path}`).toBe(`${next!.method} ${next!.path}`);
    const status = next!.status ?? 200;
    const res: ApiResponse = { status, headers: {}, body: next!.reply === undefined ? null : next!.reply };
    if (status >= 400 && !opts.allowStatus?.includes(status)) {
      const errs = Array.isArray(res.body?.errors) ? (res.body!.errors as string[]) : [];
      throw new ServerError(status, errs, res.body, `${method} ${path}`);
    }
    return res;
  }
  read(path: string, query?: Record<string, string>): Promise<ApiResponse> {
    const qs = query && Object.keys(query).length ? '?' + new URLSearchParams(query).toString() : '';
    return this.request('GET', path + qs);
  }
  write(path: string, body: unknown): Promise<ApiResponse> {
    return this.request('POST', path, body);
  }
  list(path: string): Promise<ApiResponse> {
    return this.request('LIST', path);
  }
  delete(path: string, query?: Record<string, string>): Promise<ApiResponse> {
    const qs = query && Object.keys(query).length ? '?' + new URLSearchParams(query).toString() : '';
    return this.request('DELETE', path + qs);
  }
  /** Every scripted request was made. */
  done(): void {
    expect(this.script.map((e) => `${e.method} ${e.path}`)).toEqual([]);
  }
}

/** What a command line did. */
export interface Outcome {
  stdout: string;
  /** stdout as bytes (binary output). */
  stdoutBytes: Buffer;
  stderr: string;
  status: number;
  error?: unknown;
  client: FakeClient;
}

/** Run `keyhold ARGV...` against `script`, with `stdin` as standard input. */
export async function runCli(argv: string[], script: Exchange[] = [], stdin: string | Buffer = ''): Promise<Outcome> {
  const out: Buffer[] = [];
  let err = '';
  const client = new FakeClient(script);
  const io: IO = {
    stdout: {
      write: (d: string | Uint8Array, cb?: (e?: Error | null) => void) => (out.push(Buffer.from(d)), cb?.(), true),
    },
    stderr: { write: (d: string | Uint8Array) => ((err += Buffer.from(d).toString('utf8')), true) },
    stdin: async () => Buffer.from(stdin),
    stdinIsTTY: false,
  };
  let status = 0;
  const program = buildProgram({ io, makeClient: () => client, exit: (n) => (status = n) });
  program.configureOutput({
    writeOut: (s) => io.stdout.write(s),
    writeErr: (s) => io.stderr.write(s),
    outputError: (s) => io.stderr.write(s),
  });
  let error: unknown;
  try {
    await program.parseAsync(normalizeArgv(argv), { from: 'user' });
  } catch (e) {
    error = e;
    status = exitCodeOf(e);
  }
  const bytes = Buffer.concat(out);
  return { stdout: bytes.toString('utf8'), stdoutBytes: bytes, stderr: err, status, error, client };
}
