#!/usr/bin/env node
// Thin shim: all logic lives in dist/ (compiled from src/ by `npm run build`, run by `npm ci` via prepare).
// `transit encrypt|decrypt` with plain flags take a fast path that skips loading the full CLI (dist/cli/fast-path.js).
const argv = process.argv.slice(2);
const notBuilt = (e) => {
  if (e && e.code === 'ERR_MODULE_NOT_FOUND' && /dist\/(main|cli\/fast-path)\.js/.test(String(e.message))) {
    process.stderr.write('Error: keyhold is not built yet: run `npm run build` (or `npm ci`) in the project folder\n');
  } else process.stderr.write(`Error: ${e && e.message ? e.message.split('\n')[0] : e}\n`);
  process.exitCode = 1;
};
const full = () => import('../dist/main.js').then((m) => m.main(argv), notBuilt);
if (argv[0] === 'transit' && (argv[1] === 'encrypt' || argv[1] === 'decrypt')) {
  import('../dist/cli/fast-path.js').then((m) => m.runFast(argv)).then((done) => (done ? undefined : full()), notBuilt);
} else full();
