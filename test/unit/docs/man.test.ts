import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { generateAll, commandModel } from '../../../src/docs/generate.js';
import { manPages, roff } from '../../../src/docs/man.js';

const dir = mkdtempSync(join(tmpdir(), 'keyhold-man-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** groff with every warning enabled; returns its stderr. */
function groffWarnings(text: string): string {
  const r = spawnSync('groff', ['-man', '-Tutf8', '-ww', '-z'], { input: text, encoding: 'utf8' });
  if (r.error) throw r.error;
  return r.stderr;
}

const pages = Object.fromEntries(Object.entries(generateAll()).filter(([k]) => k.startsWith('man/')));
const SECTIONS = ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'EXIT STATUS', 'ENVIRONMENT', 'EXAMPLES'];

describe('man pages', () => {
  it('has keyhold.1 and a page for each command group of the issue', () => {
    for (const g of ['transit', 'kv', 'sync', 'operator', 'token', 'policy', 'secrets', 'audit', 'server'])
      expect(Object.keys(pages)).toContain(`man/keyhold-${g}.1`);
    expect(Object.keys(pages)).toContain('man/keyhold.1');
  });

  for (const [name, text] of Object.entries(pages)) {
    it(`${name} renders with groff -ww without a warning`, () => {
      expect(groffWarnings(text)).toBe('');
    });

    it(`${name} renders with man -l and has every section`, () => {
      const file = join(dir, name.slice(4));
      writeFileSync(file, text);
      const r = spawnSync('man', ['-l', file], {
        encoding: 'utf8',
        env: { ...process.env, MANWIDTH: '100', MANPAGER: 'cat', PAGER: 'cat', LANG: 'C.UTF-8' },
      });
      expect(r.status).toBe(0);
      expect(r.stderr).toBe('');
      for (const s of SECTIONS) expect(r.stdout).toMatch(new RegExp(`^${s}$`, 'm'));
    });
  }

  it('lists options of group commands with their descriptions (transit encrypt, kv put)', () => {
    const transit = pages['man/keyhold-transit.1']!;
    expect(transit).toContain('.SS "keyhold transit encrypt"');
    expect(transit).toMatch(/\\fB\\-\\-mount\\fR \\fI<path>\\fR/);
    expect(pages['man/keyhold-kv.1']).toContain('.SS "keyhold kv put"');
  });

  it('escapes roff control characters, backslashes and hyphens', () => {
    expect(roff('.hidden')).toBe('\\&.hidden');
    expect(roff("'quote")).toBe("\\&'quote");
    expect(roff('a\\b')).toBe('a\\eb');
    expect(roff('--flag')).toBe('\\-\\-flag');
    expect(roff('use `keyhold login`')).toBe('use \\fBkeyhold login\\fR');
  });

  it('renders hostile help text (leading dots, backslashes, quotes) without warnings', () => {
    const p = new Command('keyhold').description('test program').option('--address <addr>', 'address');
    const g = p.command('grp').description('.starts with a dot');
    g.command('leaf')
      .description('\'quoted \\ back\\slash "double" -- dashes')
      .argument('<name>', '.dot arg')
      .option('--x <v>', '.dot option\\n');
    const out = manPages(commandModel(p), '1.0');
    expect(Object.keys(out).sort()).toEqual(['keyhold-grp.1', 'keyhold.1']);
    for (const text of Object.values(out)) expect(groffWarnings(text)).toBe('');
  });
});
