/**
 * Test support: the preinstalled moto server as a local AWS Secrets Manager
 * (`python3 -m moto.server -H 127.0.0.1 -p PORT`; reference sync-wire.md 4.1). Readiness is polled
 * on GET /moto-api/ with a bounded wait; `reset()` clears its state between tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';

/** A running moto server. */
export interface Moto {
  endpoint: string;
  port: number;
  proc: ChildProcess;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function get(url: string, method = 'GET'): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = request(url, { method }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    r.on('error', reject);
    r.setTimeout(2000, () => r.destroy(new Error('timeout')));
    r.end();
  });
}

/** Start moto on a free loopback port; rejects if it is not ready within `timeoutMs`. */
export async function startMoto(timeoutMs = 30_000): Promise<Moto> {
  const port = await freePort();
  const proc = spawn('python3', ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4000)));
  proc.stderr!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4000)));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`moto exited with ${proc.exitCode}: ${out}`);
    try {
      if ((await get(`${endpoint}/moto-api/`)) < 500) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`moto did not become ready within ${timeoutMs} ms: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    port,
    proc,
    reset: async () => {
      await get(`${endpoint}/moto-api/reset`, 'POST');
    },
    stop: () =>
      new Promise((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}
