#!/usr/bin/env node
// Thin shim: all logic lives in dist/ (compiled from src/ by `npm run build`).
import('../dist/main.js').then((m) => m.main(process.argv.slice(2)));
