import { describe, expect, it } from 'vitest';
import { ANCHORS, renderTable } from '../../../bench/lib/report.js';

describe('bench report table', () => {
  it('shows a missing figure as "-", a failed case as NO with its note, and ratios with an x', () => {
    const t = renderTable([
      {
        id: 'encrypt-socket',
        value: 12345.6,
        unit: 'req/s',
        baseline: 20000,
        ratio: 0.6173,
        target: 'ratio >= 0.7',
        pass: false,
        note: 'missed: ratio >= 0.7',
      },
      {
        id: 'sync-1000',
        value: null,
        unit: 's',
        baseline: null,
        ratio: null,
        target: 'ratio <= 2',
        pass: false,
        note: 'feature missing: secret sync',
      },
      { id: 'rss-idle', value: 61.2, unit: 'MB', baseline: null, ratio: null, target: 'value <= 120', pass: true },
    ]);
    const rows = t.split('\n');
    expect(rows).toHaveLength(5);
    expect(rows[2]).toBe(
      '| encrypt-socket | 12,346 | req/s | 20,000 | 0.6173x | ratio >= 0.7 | NO | missed: ratio >= 0.7 |',
    );
    expect(rows[3]).toBe('| sync-1000 | - | s | - | - | ratio <= 2 | NO | feature missing: secret sync |');
    expect(rows[4]).toBe('| rss-idle | 61.2 | MB | - | - | value <= 120 | yes |  |');
  });

  it('carries both published anchors', () => {
    expect(ANCHORS.join(' ')).toMatch(/0\.61 ms.*1\.82 ms.*1,750/);
    expect(ANCHORS.join(' ')).toMatch(/5,500-10,000 req\/s/);
  });
});
