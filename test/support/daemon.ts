/**
 * Test support: start the real built `keyhold` daemon as a child process on a temporary Unix socket
 * (and optionally a TCP port), drive it over HTTP and through the CLI.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';

export const ROOT = resolve(import.meta.dirname, '..', '..');
/**
 * The built CLI. KEYHOLD_TEST_ROOT points at another tree holding bin/ and dist/ (a private build,
 * so parallel work rebuilding the shared dist/ cannot break a running test).
 */
export const BIN = join(process.env.KEYHOLD_TEST_ROOT ?? ROOT, 'bin', 'keyhold.js');

/** An HTTP answer from the daemon. */
export interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A running daemon. */
export interface Daemon {
  dir: string;
  socket: string;
  /** `unix://...` address for the CLI. */
  addr: string;
  /** `http://127.0.0.1:port` when started with tcp. */
  tcp?: string;
  token: string;
  proc: ChildProcess;
  /** Captured stdout+stderr of the daemon. */
  output(): string;
  /** HTTP request to /v1/<path> over the socket; body objects are JSON-encoded. */
  req(
    method: string,
    path: string,
    body?: unknown,
    opts?: { token?: string | null; headers?: Record<string, string>; raw?: Buffer | string },
  ): Promise<Answer>;
  /** Run the CLI against this daemon. */
  cli(
    args: string[],
    opts?: {
      input?: string | Buffer;
      env?: Record<string, string | undefined>;
      token?: string | null;
      encoding?: 'utf8' | 'buffer';
      keepNewline?: boolean;
    },
  ): Promise<{ exitCode: number; stdout: string; stderr: string; stdoutBuffer: Buffer }>;
  /** SIGTERM and wait. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
}

/** Options for startDaemon. */
export interface StartOptions {
  dev?: boolean;
  /** Extra server flags. */
  args?: string[];
  /** Reuse a directory (restart on the same storage). */
  dir?: string;
  tcp?: boolean;
  env?: Record<string, string | undefined>;
  rootToken?: string;
  /** Wait for readiness (health answers anything). */
  wait?: boolean;
}

/** Plain HTTP request over a Unix socket or TCP. */
export function httpReq(
  target: { socket?: string; base?: string },
  method: string,
  path: string,
  body?: unknown,
  opts: { token?: string | null; headers?: Record<string, string>; raw?: Buffer | string } = {},
): Promise<Answer> {
  return new Promise((res, rej) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers['X-Vault-Token'] = opts.token;
    let payload: Buffer | undefined;
    if (opts.raw !== undefined) payload = Buffer.from(opts.raw);
    else if (body !== undefined) {
      payload = Buffer.from(JSON.stringify(body));
      headers['Content-Type'] ??= 'application/json';
    }
    if (payload) headers['Content-Length'] = String(payload.length);
    const p = '/v1/' + path.replace(/^\/+/, '');
    const u = target.base ? new URL(target.base) : undefined;
    const r = request(
      u
        ? { host: u.hostname, port: u.port, path: p, method, headers }
        : { socketPath: target.socket, path: p, method, headers },
      (resp) => {
        const chunks: Buffer[] = [];
        resp.on('data', (c: Buffer) => chunks.push(c));
        resp.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = null;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            parsed = text;
          }
          res({ status: resp.statusCode ?? 0, body: parsed, headers: resp.headers, text });
        });
      },
    );
    r.on('error', rej);
    // The server may answer early (413) and close while a large body is still being written: a late
    // EPIPE on the socket after the answer is expected, not a failure (errors before it still reject).
    r.on('socket', (sock) => {
      // Once per socket: keep-alive sockets serve many requests.
      if (quieted.has(sock)) return;
      quieted.add(sock);
      sock.on('error', () => {});
    });
    r.end(payload);
  });
}

/** Sockets that already carry the listener ignoring a late EPIPE. */
const quieted = new WeakSet<object>();

async function waitReady(socket: string, proc: ChildProcess, out: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) throw new Error(`daemon exited with ${proc.exitCode}: ${out()}`);
    try {
      await httpReq({ socket }, 'GET', 'sys/health');
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`daemon did not become ready: ${out()}`);
}

let portSeq = 0;
/** A TCP port unlikely to collide between parallel test files. */
export function freePort(): number {
  return 20000 + ((process.pid * 7 + portSeq++ * 13) % 30000);
}

/** Start a daemon. Dev mode (in-memory, unsealed, root token "root") unless `dev: false`. */
export async function startDaemon(opts: StartOptions = {}): Promise<Daemon> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'keyhold-test-'));
  const socket = join(dir, 'keyhold.sock');
  const dev = opts.dev ?? true;
  const token = opts.rootToken ?? 'root';
  const args = [BIN, 'server', '--socket', socket, '--log-level', 'warn'];
  if (dev) args.push('--dev', '--dev-root-token', token);
  else args.push('--storage-path', join(dir, 'data'));
  let tcp: string | undefined;
  // Port 0: the kernel picks a free port; the daemon prints it ("Listening on: http://127.0.0.1:N").
  if (opts.tcp) args.push('--listen', '127.0.0.1:0');
  args.push(...(opts.args ?? []));
  const env = { ...process.env, KEYHOLD_HOME: dir, ...opts.env };
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const d: Daemon = {
    dir,
    socket,
    addr: `unix://${socket}`,
    tcp,
    token,
    proc,
    output: () => out,
    req: (method, path, body, o = {}) =>
      httpReq({ socket }, method, path, body, { ...o, token: o.token === null ? undefined : (o.token ?? token) }),
    cli: async (cliArgs, o = {}) => {
      const r = await execa(process.execPath, [BIN, ...cliArgs], {
        input: o.input,
        reject: false,
        encoding: 'buffer',
        env: {
          KEYHOLD_HOME: dir,
          KEYHOLD_ADDR: `unix://${socket}`,
          KEYHOLD_TOKEN: o.token === null ? undefined : (o.token ?? token),
          NO_COLOR: '1',
          ...o.env,
        },
        extendEnv: true,
        timeout: 60_000,
        // execa strips one final newline by default; keepNewline shows the output byte for byte.
        stripFinalNewline: !o.keepNewline,
      });
      const stdoutBuffer = Buffer.from(r.stdout as unknown as Uint8Array);
      return {
        exitCode: r.exitCode ?? -1,
        stdout: stdoutBuffer.toString('utf8'),
        stderr: Buffer.from(r.stderr as unknown as Uint8Array).toString('utf8'),
        stdoutBuffer,
      };
    },
    stop: () =>
      new Promise((r) => {
        if (proc.exitCode !== null) return r(proc.exitCode);
        proc.once('exit', (code) => r(code));
        proc.kill('SIGTERM');
      }),
    kill: () =>
      new Promise((r) => {
        if (proc.exitCode !== null || proc.signalCode) return r();
        proc.once('exit', () => r());
        proc.kill('SIGKILL');
      }),
  };
  if (opts.wait ?? true) {
    await waitReady(socket, proc, () => out);
    if (opts.tcp) {
      for (let i = 0; i < 100 && !/Listening on: https?:\/\//.test(out); i++)
        await new Promise((r) => setTimeout(r, 20));
      tcp = /Listening on: (https?:\/\/[^\s]+)/.exec(out)?.[1];
      if (!tcp) throw new Error(`daemon printed no TCP address: ${out}`);
      d.tcp = tcp;
    }
  }
  return d;
}

/** Remove a test directory. */
export function cleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
