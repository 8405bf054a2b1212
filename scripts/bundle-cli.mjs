#!/usr/bin/env node
/**
 * Bundle the CLI fast path (dist/cli/fast-path.js and the few modules it imports) into one CommonJS
 * file, dist/bundle/fast-path.cjs, after tsc has written dist/. `transit encrypt|decrypt`, `status`
 * and `--version` then start like `node -e 0`: a CommonJS entry that requires one file never starts
 * Node's ES module loader, and there is nothing to resolve, read or link module by module (Node 20
 * has no compile cache). The full CLI keeps running from dist/ (it loads its heavy parts lazily).
 *
 * bin/keyhold.js uses the bundle only while it is newer than dist/cli/fast-path.js, so a plain
 * `npx tsc -p tsconfig.json` (which rewrites every file of dist/) never leaves a stale bundle in use.
 * Without esbuild (a production install without devDependencies) this prints a note and exits 0.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  process.stderr.write('bundle-cli: esbuild is not installed; the CLI fast path runs from dist/ unbundled\n');
  process.exit(0);
}
const outdir = join(root, 'dist', 'bundle');
rmSync(outdir, { recursive: true, force: true });
await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['dist/cli/fast-path.js'],
  outfile: join(outdir, 'fast-path.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.5',
  logLevel: 'warning',
  legalComments: 'none',
});
