/**
 * Main script of the single executable (bundled by scripts/package.mjs): the same dispatch as
 * bin/keyhold.js. The commands scripts call in loops (`transit encrypt|decrypt`, `status`,
 * `--version`) run the small fast path bundled here, so they start like a bare Node.js; everything
 * else, the daemon included, runs dist/main.js's CLI from the embedded script keyhold-full.cjs,
 * compiled with its embedded V8 code cache (keyhold-full.cache) only when needed.
 */
'use strict';
const { runFast } = require('../../dist/cli/fast-path.js');

const argv = process.argv.slice(2);
// Started through a symlink or copy named `vault`: the vault CLI's face (issue 34, src/cli/face.ts).
const isVault = (p) => /^vault(\.exe)?$/i.test(require('node:path').basename(p || ''));
const face = isVault(process.argv0) || isVault(process.argv[1]) ? 'vault' : 'keyhold';
const fail = (e) => {
  process.stderr.write(`Error: ${e && e.message ? e.message.split('\n')[0] : e}\n`);
  process.exitCode = 1;
};

/** Compile and run the embedded full CLI; returns its exports ({ main }). */
function loadFull() {
  const sea = require('node:sea');
  const vm = require('node:vm');
  const code = sea.getAsset('keyhold-full.cjs', 'utf8');
  let cachedData;
  try {
    cachedData = Buffer.from(sea.getAsset('keyhold-full.cache'));
  } catch {
    cachedData = undefined; // built without a cache: compile from source
  }
  const script = new vm.Script(code, { filename: 'keyhold-full.cjs', cachedData, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
  const mod = { exports: {} };
  script.runInThisContext()(mod.exports, require, mod, process.execPath, require('node:path').dirname(process.execPath));
  return mod.exports;
}

const full = () => Promise.resolve().then(loadFull).then((m) => m.main(argv, face), fail);
const fast = face === 'keyhold' && ((argv[0] === 'transit' && (argv[1] === 'encrypt' || argv[1] === 'decrypt')) || argv[0] === 'status' || (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')));
if (fast) runFast(argv).then((done) => (done ? undefined : full()), fail);
else full();
