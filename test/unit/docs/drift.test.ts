import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateAll, manField, REGENERATE, staleFiles } from '../../../src/docs/generate.js';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');

describe('generated docs stay in step with the code', () => {
  const files = generateAll();

  it('writes completions for three shells, the command reference and a man page per group', () => {
    expect(Object.keys(files)).toEqual(
      expect.arrayContaining([
        'completions/keyhold.bash',
        'completions/_keyhold',
        'completions/keyhold.fish',
        'docs/reference/cli.md',
        'man/keyhold.1',
        'man/keyhold-server.1',
        'man/keyhold-transit.1',
        'man/keyhold-kv.1',
      ]),
    );
  });

  for (const [rel, text] of Object.entries(files)) {
    it(`committed ${rel} matches the code`, () => {
      const path = join(ROOT, rel);
      const committed = existsSync(path) ? readFileSync(path, 'utf8') : null;
      // One clear instruction instead of a huge diff.
      if (committed !== text)
        expect.fail(
          `${rel} is ${committed === null ? 'missing' : 'out of date'}: run \`${REGENERATE}\` and commit the result`,
        );
    });
  }

  it('leaves no stale files in man/ or completions/', () => {
    const stale = staleFiles(ROOT, files);
    if (stale.length)
      expect.fail(`no longer generated: ${stale.join(', ')}: run \`${REGENERATE}\` (it removes them) and commit`);
  });

  it('package.json "man" (when present) lists exactly the generated pages', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { man?: string[] };
    const expected = manField(files);
    expect(expected).toContain('./man/keyhold.1');
    if (pkg.man !== undefined) expect([...pkg.man].sort()).toEqual(expected);
  });

  it('generates the same bytes twice and under another environment (no clock, machine or user in the output)', () => {
    expect(generateAll()).toEqual(files);
    const keys = [
      'KEYHOLD_HOME',
      'KEYHOLD_ADDR',
      'KEYHOLD_TOKEN',
      'XDG_RUNTIME_DIR',
      'XDG_DATA_HOME',
      'XDG_CONFIG_HOME',
      'NO_COLOR',
      'COLUMNS',
      'HOME',
    ];
    const saved = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
    try {
      for (const k of keys) process.env[k] = k === 'COLUMNS' ? '41' : `/elsewhere/${k.toLowerCase()}`;
      expect(generateAll()).toEqual(files);
    } finally {
      for (const k of keys) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
    const text = Object.values(files).join('\n');
    expect(text).not.toContain(process.env.HOME ?? '/nonexistent-home');
    expect(text).not.toMatch(/\b20\d\d-\d\d-\d\dT/);
  });
});
