/**
 * The load generator, run as its own process (so it never shares an event loop with the server it
 * measures): a fixed request, an optional warm-up run, then one measured run, with autocannon; with
 * KEYHOLD_BENCH_CLIENT=lean closed-loop runs use the lean client of lean-load.js instead.
 * Input: one JSON document on stdin {target: {socketPath?, url}, method, path, headers, body, connections,
 * warmupSec, durationSec, overallRate?}. Output: one JSON line on stdout with throughput and exact latencies
 * (autocannon's own histogram has 1 ms resolution, too coarse for a 2 ms p99 target, so every
 * response time is recorded here in a typed array and the percentiles are computed exactly).
 */
import { text } from 'node:stream/consumers';
import autocannon from 'autocannon';
import { runLean } from './lean-load.js';
import { percentile, mean } from './stats.js';

const opts = JSON.parse(await text(process.stdin));

function once(durationSec, record) {
  // KEYHOLD_BENCH_CLIENT=lean: closed-loop runs with the lean client (see lean-load.js and
  // docs/benchmarks.md for what it changes); autocannon otherwise, as every recorded run used.
  const lean = process.env.KEYHOLD_BENCH_CLIENT === 'lean' && !opts.overallRate && !opts.connectionRate;
  return lean ? onceLean(durationSec, record) : onceAutocannon(durationSec, record);
}

async function onceLean(durationSec, record) {
  const times = record ? new Float64Array(4_000_000) : null;
  let n = 0;
  let ok = 0;
  let bad = 0;
  const statuses = {};
  const target = opts.target.socketPath
    ? { socketPath: opts.target.socketPath }
    : (({ hostname, port }) => ({ host: hostname, port: Number(port) }))(new URL(opts.target.url));
  const res = await runLean({
    target,
    method: opts.method,
    path: opts.path,
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections,
    durationSec,
    timeoutSec: 30,
    onResponse(status, ms) {
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status >= 200 && status < 300) {
        ok++;
        if (times && n < times.length) times[n++] = ms;
      } else bad++;
    },
  });
  const lat = times ? times.subarray(0, n) : new Float64Array(0);
  return {
    rps: ok / res.durationSec,
    ok,
    bad,
    statuses,
    errors: res.errors,
    timeouts: res.timeouts,
    durationSec: res.durationSec,
    latency: { mean: mean(lat), p50: percentile(lat, 50), p99: percentile(lat, 99), max: percentile(lat, 100) },
  };
}

function onceAutocannon(durationSec, record) {
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
