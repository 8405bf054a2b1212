#!/usr/bin/env node
/**
 * Summarise a V8 .cpuprofile (from `node bench/run.js --profile`): self time by function and by
 * file, top N, so a missed target points at the code that costs the time.
 * Usage: node bench/profile-summary.js FILE.cpuprofile [N]
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { ROOT } from './lib/procs.js';

const [file, nArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/profile-summary.js FILE.cpuprofile [N]\n');
  process.exit(1);
}
const n = Number(nArg ?? 30);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((node) => [node.id, node]));
const selfUs = new Map();
// timeDeltas[i] is the time before samples[i]; attribute it to that sample's node.
for (let i = 0; i < prof.samples.length; i++)
  selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
// Percentages are of busy time: the daemon idles while the baselines run.
let idle = 0;
for (const [id, us] of selfUs) if (byId.get(id).callFrame.functionName === '(idle)') idle += us;
const busy = total - idle;

function where(cf) {
  const url = cf.url ? (cf.url.startsWith('file://') ? relative(ROOT, new URL(cf.url).pathname) : cf.url) : '';
  return url ? `${url}:${cf.lineNumber + 1}` : '(native)';
}

const byFn = new Map();
const byFile = new Map();
for (const [id, us] of selfUs) {
  const cf = byId.get(id).callFrame;
  if (cf.functionName === '(idle)') continue;
  const fn = `${cf.functionName || '(anonymous)'} ${where(cf)}`;
  byFn.set(fn, (byFn.get(fn) ?? 0) + us);
  const f = cf.url ? where(cf).replace(/:\d+$/, '') : cf.functionName || '(native)';
  byFile.set(f, (byFile.get(f) ?? 0) + us);
}

// Inclusive time of the project's own functions (dist/, src/): each sample counts once per function on its stack.
const parent = new Map();
for (const node of prof.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
const incl = new Map();
for (const [id, us] of selfUs) {
  if (byId.get(id).callFrame.functionName === '(idle)') continue;
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const cf = byId.get(cur).callFrame;
    if (!/\/(dist|src)\//.test(cf.url)) continue;
    const fn = `${cf.functionName || '(anonymous)'} ${where(cf)}`;
    if (seen.has(fn)) continue;
    seen.add(fn);
    incl.set(fn, (incl.get(fn) ?? 0) + us);
  }
}

const pct = (us) => ((100 * us) / busy).toFixed(1).padStart(5) + '%';
const top = (m) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
process.stdout.write(
  `sampled ${(total / 1e6).toFixed(2)} s, busy ${(busy / 1e6).toFixed(2)} s; percentages are of busy time\n\nself time by function:\n`,
);
for (const [k, v] of top(byFn)) process.stdout.write(`${pct(v)}  ${k}\n`);

process.stdout.write('\ninclusive time of project functions:\n');
for (const [k, v] of top(incl)) process.stdout.write(`${pct(v)}  ${k}\n`);
process.stdout.write('\nself time by file:\n');
for (const [k, v] of top(byFile)) process.stdout.write(`${pct(v)}  ${k}\n`);
