/** Run the load generator (bench/lib/load-worker.js) in its own process and return its figures. */
import { join } from 'node:path';
import { ROOT, runCmd } from './procs.js';

const WORKER = join(ROOT, 'bench', 'lib', 'load-worker.js');

/**
 * One load run: `{target, method, path, headers, body, connections, warmupSec, durationSec}` ->
 * `{rps, ok, bad, statuses, errors, latency: {mean, p50, p99, max}}` (latencies in ms).
 */
export async function runLoad(opts) {
  const target = opts.target.socketPath
    ? { socketPath: opts.target.socketPath, url: 'http://localhost' }
    : { url: `http://${opts.target.host}:${opts.target.port}` };
  const spec = { method: 'POST', connections: 16, warmupSec: 0, headers: {}, ...opts, target };
  if (typeof spec.body !== 'string' && spec.body !== undefined) {
    spec.body = JSON.stringify(spec.body);
    spec.headers = { 'Content-Type': 'application/json', ...spec.headers };
  }
  const r = await runCmd(process.execPath, [WORKER], {
    input: JSON.stringify(spec),
    timeoutMs: (spec.warmupSec + spec.durationSec + 120) * 1000,
  });
  if (r.code !== 0) throw new Error(`load generator failed: ${r.stderr.slice(-400)}`);
  return JSON.parse(r.stdout.toString('utf8').trim().split('\n').pop());
}
