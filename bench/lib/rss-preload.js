/**
 * Preloaded (`node --import`) into a measured CLI process: at exit, write its peak RSS (KiB, from
 * process.resourceUsage) to the file named by BENCH_RSS_OUT. Costs nothing while the CLI runs.
 */
import { writeFileSync } from 'node:fs';

const out = process.env.BENCH_RSS_OUT;
if (out) process.on('exit', () => writeFileSync(out, String(process.resourceUsage().maxRSS)));
