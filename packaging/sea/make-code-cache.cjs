/**
 * Run by the executable's own Node.js at build time (scripts/package.mjs): compile the full CLI
 * bundle the way entry.cjs does, run its top level, and write V8's code cache for it.
 * argv: <bundle.cjs> <out.cache>
 */
'use strict';
const { readFileSync, writeFileSync } = require('node:fs');
const vm = require('node:vm');
const [file, out] = process.argv.slice(2);
const script = new vm.Script(readFileSync(file, 'utf8'), { filename: 'keyhold-full.cjs', importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
const mod = { exports: {} };
script.runInThisContext()(mod.exports, require, mod, process.execPath, __dirname);
writeFileSync(out, script.createCachedData());
