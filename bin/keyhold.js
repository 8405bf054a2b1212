#!/usr/bin/env node
// Thin shim: all logic lives in dist/ (compiled from src/ by `npm run build`, run by `npm ci` via prepare).
import('../dist/main.js').then(
  (m) => m.main(process.argv.slice(2)),
  (e) => {
    if (e && e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('dist/main.js')) {
      process.stderr.write('Error: keyhold is not built yet: run `npm run build` (or `npm ci`) in the project folder\n');
    } else process.stderr.write(`Error: ${e && e.message ? e.message.split('\n')[0] : e}\n`);
    process.exitCode = 1;
  },
);
