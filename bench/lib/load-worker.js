/**
 * The load generator, run as its own process (so it never shares an event loop with the server it
 * measures): autocannon with a fixed request, an optional warm-up run, then one measured run.
 * Input: one JSON document on stdin {target: {socketPath?, url}, method, path, headers, body, connections,
 * warmupSec, durationSec, overallRate?}. Output: one JSON line on stdout with throughput and exact latencies
 * (autocannon's own histogram has 1 ms resolution, too coarse for a 2 ms p99 target, so every
 * response time is recorded here in a typed array and the percentiles are computed exactly).
 */
import { text } from 'node:stream/consumers';
import autocannon from 'autocannon';
import { percentile, mean } from './stats.js';

const opts = JSON.parse(await text(process.stdin));

function once(durationSec, record) {
  return new Promise((resolve, reject) => {
    const times = record ? new Float64Array(4_000_000) : null;
    let n = 0;
    let ok = 0;
    let bad = 0;
    const statuses = {};
    const inst = autocannon(
      {
        url: opts.target.url + opts.path,
        socketPath: opts.target.socketPath,
        method: opts.method,
        headers: opts.headers,
        body: opts.body,
        connections: opts.connections,
        overallRate: opts.overallRate,
        connectionRate: opts.connectionRate,
        duration: durationSec,
        timeout: 30,
      },
      (err, res) => {
        if (err) return reject(err);
        const lat = times ? times.subarray(0, n) : new Float64Array(0);
        resolve({
          rps: ok / res.duration,
          ok,
          bad,
          statuses,
          errors: res.errors,
          timeouts: res.timeouts,
          durationSec: res.duration,
          latency: { mean: mean(lat), p50: percentile(lat, 50), p99: percentile(lat, 99), max: percentile(lat, 100) },
        });
      },
    );
    inst.on('response', (_client, status, _bytes, responseTime) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status >= 200 && status < 300) {
        ok++;
        if (times && n < times.length) times[n++] = responseTime;
      } else bad++;
    });
  });
}

let warmupOk = 0;
if (opts.warmupSec > 0) {
  warmupOk = (await once(opts.warmupSec, false)).ok;
  // Requests cut off at the end of the warm-up may still be running in the server (long batches):
  // let them drain so they do not eat into the measured run.
  await new Promise((r) => setTimeout(r, 300));
}
const r = await once(opts.durationSec, true);
process.stdout.write(JSON.stringify({ ...r, warmupOk }) + '\n');
