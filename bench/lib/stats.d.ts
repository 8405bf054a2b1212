/** Types of bench/lib/stats.js for TypeScript callers (the unit tests). */
export interface Check {
  on: string;
  op: '>=' | '<=';
  limit: number;
}
export function median(values: unknown[]): number | null;
export function percentile(samples: ArrayLike<number>, p: number): number | null;
export function mean(samples: ArrayLike<number>): number | null;
export function ratioOf(value: unknown, baseline: unknown): number | null;
export function judge(checks: Check[], figures: Record<string, unknown>): { pass: boolean; failed: string[] };
export function describeTarget(checks: Check[]): string;
export function round(v: unknown, digits?: number): number | null;
