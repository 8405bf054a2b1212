import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/development.md's layout map names every folder under src/ (a newcomer finds each there).
const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const SRC = join(ROOT, 'src');

function folders(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? [p, ...folders(p)] : [];
  });
}

describe('the layout map of docs/development.md', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'development.md'), 'utf8');
  const map = /## Layout[\s\S]*?```text\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';

  it('is there', () => {
    expect(map).toContain('src/framework/');
  });

  it('names every folder under src/ (a line of its own, or `name/` in its parent line)', () => {
    const lines = map.split('\n');
    // Continuation lines (indented) belong to the entry above them.
    const entries: string[] = [];
    for (const l of lines) {
      if (/^\s/.test(l) && entries.length) entries[entries.length - 1] += ' ' + l.trim();
      else entries.push(l);
    }
    const missing = folders(SRC)
      .map((d) => `${relative(ROOT, d)}/`)
      .filter((d) => {
        if (entries.some((e) => e.startsWith(d))) return false;
        const parent = d.replace(/[^/]+\/$/, '');
        const name = d.slice(parent.length);
        return !entries.some((e) => e.startsWith(parent) && e.includes(` ${name} `));
      });
    expect(missing).toEqual([]);
  });
});
