/**
 * Test support: keyhold cluster nodes (real daemons) on one throwaway PostgreSQL, each with a Vault
 * HCL config file, a Unix socket and a TCP listener whose address is its api_addr.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, httpReq, type Answer } from './daemon.js';

/** A port the kernel says is free now (listen on 0, close). */
export async function pickPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Options for a node. */
export interface NodeOptions {
  url: string;
  /** Lock TTL for the test cluster (short: failovers after a pause stay quick). */
  lockTtl?: string;
  table?: string;
  haEnabled?: boolean;
  disableStandbyReads?: boolean;
  extraHcl?: string;
  env?: Record<string, string>;
}

/** A running (or stopped) node. */
export interface ClusterNode {
  name: string;
  dir: string;
  socket: string;
  api: string;
  port: number;
  config: string;
  proc: ChildProcess | null;
  output(): string;
  start(): Promise<void>;
  req(
    method: string,
    path: string,
    body?: unknown,
    opts?: { token?: string; headers?: Record<string, string> },
  ): Promise<Answer>;
  /** Same over TCP (the api_addr). */
  tcpReq(
    method: string,
    path: string,
    body?: unknown,
    opts?: { token?: string; headers?: Record<string, string> },
  ): Promise<Answer>;
  kill9(): Promise<void>;
  stop(): Promise<void>;
  remove(): void;
}

/** Create (and start) a node. */
export async function startNode(name: string, opts: NodeOptions): Promise<ClusterNode> {
  const dir = mkdtempSync(join(tmpdir(), `keyhold-node-${name}-`));
  const socket = join(dir, 'k.sock');
  const port = await pickPort();
  const api = `http://127.0.0.1:${port}`;
  const config = join(dir, 'node.hcl');
  writeFileSync(
    config,
    `storage "postgresql" {
  connection_url = "${opts.url}"
  ha_enabled     = "${opts.haEnabled === false ? 'false' : 'true'}"
  ha_lock_ttl    = "${opts.lockTtl ?? '3s'}"
${opts.table ? `  table = "${opts.table}"\n  ha_table = "${opts.table}_ha"\n` : ''}}
listener "unix" {
  address = "${socket}"
}
listener "tcp" {
  address     = "127.0.0.1:${port}"
  tls_disable = true
}
api_addr  = "${api}"
keychain  = "none"
log_level = "warn"
disable_standby_reads = ${opts.disableStandbyReads ? 'true' : 'false'}
${opts.extraHcl ?? ''}
`,
  );
  let out = '';
  const node: ClusterNode = {
    name,
    dir,
    socket,
    api,
    port,
    config,
    proc: null,
    output: () => out,
    async start() {
      out = '';
      const p = spawn(process.execPath, [BIN, 'server', '--config', config], {
        env: { ...process.env, KEYHOLD_HOME: dir, KEYHOLD_STEP_DOWN_WAIT_MS: '500', ...opts.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      p.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      p.stderr!.on('data', (c: Buffer) => (out += c.toString()));
      node.proc = p;
      // Bounded by time, not tries: on a loaded 2-core CI machine a start has taken over 10 s.
      const deadline = Date.now() + 45_000;
      while (Date.now() < deadline) {
        if (p.exitCode !== null) throw new Error(`node ${name} exited with ${p.exitCode}: ${out}`);
        if (out.includes('Listening on: http://')) {
          try {
            await httpReq({ socket }, 'GET', 'sys/seal-status');
            return;
          } catch {
            /* not yet */
          }
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`node ${name} did not start within 45 s: ${out}`);
    },
    req: (method, path, body, o = {}) =>
      httpReq({ socket }, method, path, body, { token: o.token, headers: o.headers }),
    tcpReq: (method, path, body, o = {}) =>
      httpReq({ base: api }, method, path, body, { token: o.token, headers: o.headers }),
    kill9: () =>
      new Promise((r) => {
        const p = node.proc;
        if (!p || p.exitCode !== null || p.signalCode) return r();
        p.once('exit', () => r());
        p.kill('SIGKILL');
      }),
    stop: () =>
      new Promise((r) => {
        const p = node.proc;
        if (!p || p.exitCode !== null || p.signalCode) return r();
        p.once('exit', () => r());
        p.kill('SIGTERM');
      }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
  await node.start();
  return node;
}

/** Poll until `fn` returns a truthy value (or time out with `what`). */
export async function until<T>(fn: () => Promise<T> | T, what: string, timeoutMs = 15_000, stepMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** Role of a node from sys/health (200 active, 473/429 standby, 503 sealed). */
export async function roleOf(n: ClusterNode): Promise<'active' | 'standby' | 'sealed' | 'down'> {
  try {
    const r = await n.req('GET', 'sys/health');
    return r.status === 200
      ? 'active'
      : r.status === 473 || r.status === 429
        ? 'standby'
        : r.status === 503
          ? 'sealed'
          : 'down';
  } catch {
    return 'down';
  }
}
