/** Printing the results table and the published anchors; writing bench/results/latest.json. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { round } from './stats.js';

/** Published figures printed beside the table (not run here). */
export const ANCHORS = [
  "Vault's vault-benchmark sample: transit encrypt mean 0.61 ms, p99 1.82 ms at ~1,750 req/s per operation",
  'AWS KMS quota: 5,500-10,000 req/s per account and region for symmetric cryptographic operations',
];

function fmt(v) {
  if (v === null || v === undefined) return '-';
  if (typeof v !== 'number') return String(v);
  const r = round(v, 4);
  return Math.abs(r) >= 1000 ? Math.round(r).toLocaleString('en-US') : String(r);
}

/** The table as plain text (markdown pipe table so the README can take it verbatim). */
export function renderTable(cases) {
  const head = ['case', 'value', 'unit', 'baseline', 'ratio', 'target', 'pass', 'note'];
  const rows = cases.map((c) => [
    c.id,
    fmt(c.value),
    c.unit,
    fmt(c.baseline),
    c.ratio === null ? '-' : fmt(c.ratio) + 'x',
    c.target,
    c.pass ? 'yes' : 'NO',
    c.note ?? '',
  ]);
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Print the table, the anchors and the machine line to stdout. */
export function printReport(result) {
  const m = result.machine;
  const out = [];
  out.push('');
  out.push(
    `keyhold benchmark (${result.mode}) on ${m.cores} cores, ${m.cpu}, Node ${m.node}, ${m.os}, load average at start ${m.loadavg_at_start.join(' ')}`,
  );
  out.push('');
  out.push(renderTable(result.cases));
  out.push('');
  out.push('Published anchors (not run here):');
  for (const a of ANCHORS) out.push(`  - ${a}`);
  const passed = result.cases.filter((c) => c.pass).length;
  out.push('');
  out.push(`${passed}/${result.cases.length} cases meet their target.`);
  process.stdout.write(out.join('\n') + '\n');
}

/** Write the JSON result file (creating its folder). */
export function writeResult(path, result) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(result, null, 2) + '\n');
}
