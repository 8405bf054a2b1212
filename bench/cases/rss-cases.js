/**
 * Memory cases, run first on the fresh daemon (before any load raises its peak): resident set when
 * idle, and the rise of the peak during 10,000-item encrypt batches.
 */
import { randomBytes } from 'node:crypto';
import { api } from '../lib/http.js';
import { resetPeak, rssOf } from '../lib/procs.js';
import { ensureKey, requireFeature } from '../lib/setup.js';

const AES = 'bench-aes';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Memory cases in the order of the issue. */
export const rssCases = [
  {
    id: 'rss-idle',
    unit: 'MB',
    checks: [{ on: 'value', op: '<=', limit: 120 }],
    describe:
      'resident set of the daemon after init, unseal, mount, token and key set-up and one encrypt, idle for 1 s (MiB, /proc VmRSS)',
    async run(ctx) {
      try {
        await ensureKey(ctx, AES, 'aes256-gcm96');
        await api(ctx.kh.unix, 'POST', `transit/encrypt/${AES}`, { plaintext: 'aGVsbG8=' }, ctx.token);
      } catch {
        /* the figure still means something without transit */
      }
      await sleep(1000);
      const m = rssOf(ctx.kh.pid);
      if (!m) throw new Error('no /proc: RSS not readable here');
      return { value: m.rssMB, baseline: null, detail: { peak_so_far_mb: m.hwmMB } };
    },
  },
  {
    id: 'rss-batch-10000',
    unit: 'MB',
    checks: [{ on: 'value', op: '<=', limit: 300 }],
    describe:
      'rise of the daemon peak RSS over its idle RSS while it serves encrypt batch_input of 10,000 x 64 B (sequential requests), MiB',
    async run(ctx) {
      await ensureKey(ctx, AES, 'aes256-gcm96');
      const pt = randomBytes(64).toString('base64');
      const body = { batch_input: Array.from({ length: 10_000 }, () => ({ plaintext: pt })) };
      const before = rssOf(ctx.kh.pid);
      const reset = resetPeak(ctx.kh.pid);
      let polled = before.rssMB;
      let stop = false;
      const poller = (async () => {
        while (!stop) {
          polled = Math.max(polled, rssOf(ctx.kh.pid)?.rssMB ?? 0);
          await sleep(5);
        }
      })();
      const t0 = performance.now();
      try {
        for (let i = 0; i < ctx.cfg.batchRssRequests; i++) {
          const r = requireFeature(
            await api(ctx.kh.unix, 'POST', `transit/encrypt/${AES}`, body, ctx.token),
            'transit encrypt batch_input',
          );
          if (r?.data?.batch_results?.length !== 10_000)
            throw new Error('batch of 10,000 did not return 10,000 results');
        }
      } finally {
        stop = true;
        await poller;
      }
      const ms = (performance.now() - t0) / ctx.cfg.batchRssRequests;
      const after = rssOf(ctx.kh.pid);
      const peak = reset ? Math.max(after.hwmMB, polled) : polled;
      return {
        value: peak - before.rssMB,
        baseline: null,
        detail: {
          idle_mb: before.rssMB,
          peak_mb: peak,
          requests: ctx.cfg.batchRssRequests,
          ms_per_request: ms,
          peak_source: reset ? 'VmHWM after clear_refs, and 5 ms polling' : '5 ms polling of VmRSS',
        },
      };
    },
  },
];
