/** `keyhold version` from a checkout (src/build-info.ts): the commit from git, the Node.js running it. */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildInfo, versionLine } from '../../../src/build-info.js';
import { VERSION } from '../../../src/version.js';

const gitHead = (() => {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: import.meta.dirname,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
})();

describe('keyhold version (checkout)', () => {
  it('reports the version, the Node.js running it, and a build date', () => {
    const b = buildInfo();
    expect(b).toMatchObject({ version: VERSION, node: process.version, runtime: 'checkout' });
    expect(Number.isNaN(Date.parse(b.buildDate))).toBe(false);
  });

  it.skipIf(gitHead === null)('takes the commit from git', () => {
    expect(buildInfo().commit).toBe(gitHead);
  });

  it('prints one line naming all four', () => {
    const line = versionLine({
      version: '9.8.7',
      commit: 'abc123',
      buildDate: '2026-01-02T03:04:05.000Z',
      node: 'v26.1.0',
      runtime: 'executable',
    });
    expect(line).toBe('keyhold v9.8.7 (abc123), built 2026-01-02T03:04:05.000Z, Node.js v26.1.0 (single executable)');
  });
});
