#!/usr/bin/env node
/**
 * Print a results file (default bench/results/latest.json) as the markdown table of the README,
 * with the machine line: `node bench/render-table.js [FILE]`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/procs.js';
import { renderTable } from './lib/report.js';

const file = process.argv[2] ?? join(ROOT, 'bench', 'results', 'latest.json');
const r = JSON.parse(readFileSync(file, 'utf8'));
const m = r.machine;
process.stdout.write(
  `${r.mode} run of ${m.date.slice(0, 10)} on ${m.cores} cores (${m.cpu}), ${m.mem_gib} GiB, Node ${m.node}, ${m.os}; load average at start ${m.loadavg_at_start.join(' ')}\n\n`,
);
process.stdout.write(renderTable(r.cases) + '\n');
