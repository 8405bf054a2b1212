/** How kv commands print: tables with "== Title ==" sections like `vault kv`, version and flag values. */
import type { ApiResponse } from '../../client.js';
import type { Invocation } from '../../command.js';
import { LocalError } from '../../errors.js';
import { table } from '../../output.js';

/** A "== Title ==" header sized to a key/value table whose longest key is `keyWidth`. */
export function header(title: string, keyWidth: number): string {
  let eq = Math.max(3, keyWidth) + 4 + 5 - (title.length + 2);
  if (eq <= 0) eq = 4;
  if (eq % 2) eq++;
  const side = '='.repeat(eq / 2);
  return `${side} ${title} ${side}`;
}

/** Vault's rendering of values in kv tables: nil as <nil>, an unset time as n/a, objects as JSON. */
export function show(key: string, v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (v === '' && (key === 'deletion_time' || key.endsWith('_time'))) return 'n/a';
  if (typeof v === 'string') return v;
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export function kvSection(title: string, data: Record<string, unknown>): string {
  const shown: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) shown[k] = show(k, v);
  const keyWidth = Math.max(0, ...Object.keys(data).map((k) => k.length));
  return `${header(title, keyWidth)}\n${Object.keys(shown).length ? table(shown) : 'n/a\n'}`;
}

export function pathSection(title: string, p: string): string {
  return `${header(title, p.length - 9)}\n${p}\n`;
}

export function dataOf(res: ApiResponse): Record<string, unknown> {
  return (res.body?.data ?? {}) as Record<string, unknown>;
}

export function versionsOf(v: string | undefined, required: boolean): number[] | undefined {
  if (v === undefined || v === '') {
    if (required) throw new LocalError('no versions provided: use --versions 1,2');
    return undefined;
  }
  const out = v.split(',').map((s) => s.trim());
  if (!out.every((s) => /^\d+$/.test(s)))
    throw new LocalError(`--versions: expected comma-separated version numbers, got "${v}"`);
  return out.map(Number);
}

export function intFlag(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v.trim())) throw new LocalError(`${name}: expected a non-negative integer, got "${v}"`);
  return Number(v.trim());
}

export function boolFlag(name: string, v: string | boolean | undefined): boolean | undefined {
  if (v === undefined || typeof v === 'boolean') return v;
  if (/^(1|t|true)$/i.test(v)) return true;
  if (/^(0|f|false)$/i.test(v)) return false;
  throw new LocalError(`${name}: expected true or false, got "${v}"`);
}

/** Print per --field / --format, else the table made by `tableText`. */
export async function emit(
  inv: Invocation,
  body: unknown,
  fieldSource: unknown,
  tableText: () => string,
): Promise<void> {
  const g = inv.globals;
  if (g.field) return inv.print(fieldSource);
  if (g.format && g.format !== 'table') return inv.print(body);
  inv.io.stdout.write(tableText());
}

/** Warnings of an answer on stderr. */
export function warn(inv: Invocation, res: ApiResponse): void {
  for (const w of (res.body?.warnings as string[] | null) ?? []) inv.io.stderr.write(`WARNING! ${w}\n`);
}
