/** Plain key/value table rendering (no colour, no dependencies), shared by the full CLI and the fast path. */

/** A value as one table cell: strings as they are, objects as compact JSON, null as "n/a". */
export function scalar(v: unknown): string {
  if (v === null || v === undefined) return 'n/a';
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString('base64');
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** Render a key/value table ("Key  Value" with a rule line, like the vault CLI). */
export function table(data: Record<string, unknown>): string {
  const keys = Object.keys(data);
  if (keys.length === 0) return '';
  const w = Math.max(3, ...keys.map((k) => k.length));
  const lines = [`${'Key'.padEnd(w)}    Value`, `${'---'.padEnd(w)}    -----`];
  for (const k of keys.sort()) lines.push(`${k.padEnd(w)}    ${scalar(data[k])}`);
  return lines.join('\n') + '\n';
}
