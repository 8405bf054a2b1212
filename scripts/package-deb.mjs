#!/usr/bin/env node
/**
 * `npm run package:deb`: build dist/keyhold_<version>_amd64.deb with dpkg-deb from the single
 * executable (scripts/package.mjs) and packaging/deb/:
 *
 *   /usr/bin/keyhold                                      the executable
 *   /etc/keyhold/keyhold.hcl                              conffile: file storage, Unix socket only
 *   /lib/systemd/system/keyhold.service                   hardened service, user "keyhold"
 *   /usr/share/man/man1/keyhold*.1.gz                     man pages (man/)
 *   /usr/share/bash-completion/completions/keyhold        completions (completions/)
 *   /usr/share/zsh/vendor-completions/_keyhold
 *   /usr/share/fish/vendor_completions.d/keyhold.fish
 *   /usr/share/doc/keyhold/{copyright,changelog.gz}       Debian policy 12.5 and 12.7
 *   /usr/share/lintian/overrides/keyhold                  reasons in docs/install.md
 *
 * Flags: --if-stale (skip when the .deb was built from the same executable and packaging files).
 * Env: KEYHOLD_DEB_MAINTAINER (the Maintainer field; a placeholder address otherwise).
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
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const version = pkg.version;
const exe = join(root, 'dist', 'bin', 'keyhold-linux-x64');
const deb = join(root, 'dist', `keyhold_${version}_amd64.deb`);
const stage = join(root, 'dist', 'deb', `keyhold_${version}_amd64`);
const stampFile = join(root, 'dist', 'deb', '.stamp');
const src = join(root, 'packaging', 'deb');
/** The Maintainer field: set KEYHOLD_DEB_MAINTAINER for a published release. */
const maintainer = process.env.KEYHOLD_DEB_MAINTAINER || 'keyhold maintainers <maintainers@keyhold.invalid>';
const log = (m) => process.stderr.write(`package-deb: ${m}\n`);

/** Every file under `dir`, sorted. */
function filesUnder(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

function inputsHash() {
  const h = createHash('sha256');
  for (const f of [
    ...filesUnder(src),
    ...filesUnder(join(root, 'man')),
    ...filesUnder(join(root, 'completions')),
    join(root, 'package.json'),
    fileURLToPath(import.meta.url),
    `${exe}.sha256`,
  ]) {
    h.update(relative(root, f)).update('\0').update(readFileSync(f)).update('\0');
  }
  return h.digest('hex');
}

/** Copy `from` to `stage/<to>` with `mode`, creating folders 0755. */
function put(from, to, mode = 0o644) {
  const dest = join(stage, to);
  mkdirSync(dirname(dest), { recursive: true, mode: 0o755 });
  copyFileSync(from, dest);
  chmodSync(dest, mode);
}

/** Write `data` to `stage/<to>` with `mode`. */
function write(to, data, mode = 0o644) {
  const dest = join(stage, to);
  mkdirSync(dirname(dest), { recursive: true, mode: 0o755 });
  writeFileSync(dest, data);
  chmodSync(dest, mode);
}

/** gzip -9n: no name, no timestamp (reproducible; lintian checks it). */
const gz = (buf) => {
  const out = gzipSync(buf, { level: 9 });
  out.writeUInt32LE(0, 4); // MTIME = 0
  return out;
};

/** The Node.js version inside the executable (its `version --format json`). */
function nodeInside() {
  try {
    return JSON.parse(execFileSync(exe, ['version', '--format', 'json'], { encoding: 'utf8' })).node;
  } catch {
    return 'LTS';
  }
}

function changelog(date) {
  return `keyhold (${version}) unstable; urgency=medium\n\n  * Release ${version}: the single executable and this package (issue 26).\n\n -- ${maintainer}  ${date}\n`;
}

function main() {
  const ifStale = process.argv.includes('--if-stale');
  if (!existsSync(exe))
    throw new Error(`${relative(root, exe)} is missing: run \`npm run package\` first (npm run package:deb does)`);
  for (const tool of ['dpkg-deb']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      throw new Error(
        `${tool} is not installed (Debian: apt-get install dpkg); scripts/setup-test-env.sh installs it for the tests`,
      );
    }
  }
  const hash = inputsHash();
  if (ifStale && existsSync(deb) && existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === hash) {
    log(`${relative(root, deb)} is up to date`);
    return;
  }
  const t0 = performance.now();
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(join(stage, 'DEBIAN'), { recursive: true, mode: 0o755 });
  put(exe, 'usr/bin/keyhold', 0o755);
  put(join(src, 'keyhold.hcl'), 'etc/keyhold/keyhold.hcl');
  put(join(src, 'keyhold.service'), 'lib/systemd/system/keyhold.service');
  for (const m of readdirSync(join(root, 'man'))
    .filter((f) => f.endsWith('.1'))
    .sort())
    write(`usr/share/man/man1/${m}.gz`, gz(readFileSync(join(root, 'man', m))));
  put(join(root, 'completions', 'keyhold.bash'), 'usr/share/bash-completion/completions/keyhold');
  put(join(root, 'completions', '_keyhold'), 'usr/share/zsh/vendor-completions/_keyhold');
  put(join(root, 'completions', 'keyhold.fish'), 'usr/share/fish/vendor_completions.d/keyhold.fish');
  write(
    'usr/share/doc/keyhold/copyright',
    readFileSync(join(src, 'copyright.in'), 'utf8').replace('@NODE_VERSION@', nodeInside()),
  );
  // The date of the commit (reproducible), or now outside git.
  let date;
  try {
    date = execFileSync('git', ['log', '-1', '--format=%aD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    date = '';
  }
  write(
    'usr/share/doc/keyhold/changelog.gz',
    gz(Buffer.from(changelog(date || new Date().toUTCString().replace('GMT', '+0000')))),
  );
  write('usr/share/lintian/overrides/keyhold', readFileSync(join(src, 'lintian-overrides')));
  // Installed-Size: KiB of the files (dpkg's own rounding: per file, up).
  const files = filesUnder(stage).filter((f) => !f.includes(`${stage}/DEBIAN`));
  const kib = files.reduce((n, f) => n + Math.ceil(statSync(f).size / 1024), 0);
  write(
    'DEBIAN/control',
    readFileSync(join(src, 'control.in'), 'utf8')
      .replace('@VERSION@', version)
      .replace('@INSTALLED_SIZE@', String(kib))
      .replace('@MAINTAINER@', maintainer),
  );
  write('DEBIAN/conffiles', readFileSync(join(src, 'conffiles')));
  for (const s of ['postinst', 'prerm', 'postrm']) put(join(src, s), `DEBIAN/${s}`, 0o755);
  // md5sums of everything but the conffiles (Debian policy; lintian checks it).
  const conf = new Set(
    readFileSync(join(src, 'conffiles'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.slice(1)),
  );
  const sums = files
    .map((f) => relative(stage, f))
    .filter((r) => !conf.has(r))
    .map(
      (r) =>
        `${createHash('md5')
          .update(readFileSync(join(stage, r)))
          .digest('hex')}  ${r}`,
    )
    .join('\n');
  write('DEBIAN/md5sums', sums + '\n');
  for (const d of [stage, ...dirsUnder(stage)]) chmodSync(d, 0o755);
  rmSync(`${deb}.tmp`, { force: true });
  // gzip: 50 MB against xz's 38 MB, but about 15 times less CPU to build and faster to unpack
  // (zstd would be faster still, but lintian, and Debian's archive, refuse it).
  execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z6', '--build', stage, `${deb}.tmp`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  renameSync(`${deb}.tmp`, deb);
  const sum = createHash('sha256').update(readFileSync(deb)).digest('hex');
  writeFileSync(`${deb}.sha256`, `${sum}  ${basename(deb)}\n`);
  writeFileSync(stampFile, hash + '\n');
  log(
    `${relative(root, deb)}: ${(statSync(deb).size / 2 ** 20).toFixed(1)} MiB, sha256 ${sum} (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
}

function dirsUnder(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) {
      const p = join(dir, e.name);
      out.push(p, ...dirsUnder(p));
    }
  }
  return out;
}

try {
  main();
} catch (e) {
  process.stderr.write(`package-deb: ${e.message}\n`);
  process.exit(1);
}
