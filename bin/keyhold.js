#!/usr/bin/env node
// Thin shim: all logic lives in dist/ (compiled from src/ by `npm run build`, run by `npm ci` via prepare).
// CommonJS (bin/package.json), so the commands scripts call in loops (`transit encrypt|decrypt`,
// `status`, `--version`) start without Node's ES module loader: they require the fast path bundled
// into one file (dist/bundle/fast-path.cjs, scripts/bundle-cli.mjs) and skip the full CLI.
'use strict';
const { statSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
// Node 22.1+ keeps compiled code between runs (in the OS temp folder); older Nodes lack it.
try {
  require('node:module').enableCompileCache?.();
} catch {
  // A cache folder that cannot be created only costs speed.
}
const argv = process.argv.slice(2);
// Started under the name `vault` (a symlink or copy): the vault CLI's face (src/cli/face.ts, issue 34).
const face = /^vault(\.c?js|\.exe)?$/i.test(require('node:path').basename(process.argv[1] || '')) ? 'vault' : 'keyhold';
const dist = join(__dirname, '..', 'dist');
const notBuilt = (e) => {
  if (
    e &&
    (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') &&
    /dist[\\/](main|cli[\\/]fast-path)\.js/.test(String(e.message))
  ) {
    process.stderr.write('Error: keyhold is not built yet: run `npm run build` (or `npm ci`) in the project folder\n');
  } else process.stderr.write(`Error: ${e && e.message ? e.message.split('\n')[0] : e}\n`);
  process.exitCode = 1;
};
const full = () => import(pathToFileURL(join(dist, 'main.js')).href).then((m) => m.main(argv, face), notBuilt);
/** The bundled fast path, unless missing or older than dist/ (rebuilt by a bare `tsc` since). */
const fastModule = () => {
  try {
    const bundle = join(dist, 'bundle', 'fast-path.cjs');
    if (statSync(bundle).mtimeMs >= statSync(join(dist, 'cli', 'fast-path.js')).mtimeMs)
      return Promise.resolve(require(bundle));
  } catch {
    // No bundle (or no dist/ at all): the ES module below says what is missing.
  }
  return import(pathToFileURL(join(dist, 'cli', 'fast-path.js')).href);
};
const fast =
  face === 'keyhold' &&
  ((argv[0] === 'transit' && (argv[1] === 'encrypt' || argv[1] === 'decrypt')) ||
    argv[0] === 'status' ||
    (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')));
if (fast)
  void fastModule()
    .then((m) => m.runFast(argv))
    .then((done) => (done ? undefined : full()), notBuilt);
else void full();
