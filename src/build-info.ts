/**
 * What `keyhold version` reports: the version, the commit and date of the build, and the Node.js
 * inside. The single executable carries the commit and date from `npm run package` (esbuild defines
 * KEYHOLD_BUILD); a checkout asks git for its commit and takes the date of its dist/ build.
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { VERSION } from './version.js';

declare const KEYHOLD_BUILD: { commit: string; date: string } | undefined;

/** The facts `keyhold version` prints. */
export interface BuildInfo {
  version: string;
  commit: string;
  buildDate: string;
  node: string;
  /** "executable" (npm run package) or "checkout" (node bin/keyhold.js). */
  runtime: 'executable' | 'checkout';
}

/** This build's facts. */
export function buildInfo(): BuildInfo {
  const node = process.version;
  if (typeof KEYHOLD_BUILD !== 'undefined')
    return {
      version: VERSION,
      commit: KEYHOLD_BUILD.commit,
      buildDate: KEYHOLD_BUILD.date,
      node,
      runtime: 'executable',
    };
  const here = fileURLToPath(import.meta.url);
  let commit = 'unknown';
  try {
    commit =
      execFileSync('git', ['rev-parse', 'HEAD'], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 5000,
      }).trim() || 'unknown';
  } catch {
    // Not a git checkout (an npm tarball): the commit is unknown.
  }
  let buildDate = 'unknown';
  try {
    buildDate = statSync(here).mtime.toISOString();
  } catch {
    // Unreadable dist/: leave it unknown.
  }
  return { version: VERSION, commit, buildDate, node, runtime: 'checkout' };
}

/** The `keyhold version` text: `keyhold v0.1.0 (commit), built DATE, Node.js vX` */
export function versionLine(b: BuildInfo = buildInfo()): string {
  return `keyhold v${b.version} (${b.commit}), built ${b.buildDate}, Node.js ${b.node}${b.runtime === 'executable' ? ' (single executable)' : ''}`;
}
