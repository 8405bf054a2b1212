/** Types of bench/lib/report.js for TypeScript callers (the unit tests). */
export const ANCHORS: string[];
export function renderTable(
  cases: Array<{
    id: string;
    value: number | null;
    unit: string;
    baseline: number | null;
    ratio: number | null;
    target: string;
    pass: boolean;
    note?: string;
  }>,
): string;
export function printReport(result: unknown): void;
export function writeResult(path: string, result: unknown): void;
