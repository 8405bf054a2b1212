/**
 * Native addons inside the single executable (issue 26). `npm run package` embeds each addon's
 * `.node` file as an asset of the executable; a shared library can only be loaded from a file, so on
 * first use it is written to a private per-user cache folder and loaded from there.
 *
 * Nobody else may swap the library between writing and loading: the folder is created 0700 and must
 * be owned by the user (a folder of someone else, a symlink or a group/world-writable folder is
 * refused); the file is written under a temporary name and renamed into place (atomic); and the bytes
 * are hashed right before `process.dlopen` and compared with the asset's SHA-256. A cached copy whose
 * hash differs (tampered with, truncated) is replaced from the asset, never loaded.
 *
 * Outside the executable (node bin/keyhold.js) nothing here runs: the addons load from node_modules.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants as fsc,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
  chmodSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

type Sea = { isSea(): boolean; getAsset(key: string): ArrayBuffer };

let sea: Sea | null | undefined;
/** node:sea when this process is a single executable application, else null (Node < 20.12 has no node:sea). */
function seaModule(): Sea | null {
  if (sea !== undefined) return sea;
  try {
    const m = createRequire(import.meta.url)('node:sea') as Sea;
    sea = m.isSea() ? m : null;
  } catch {
    sea = null;
  }
  return sea;
}

/** True inside the single executable built by `npm run package`. */
export function isSingleExecutable(): boolean {
  return seaModule() !== null;
}

/**
 * The private folder addons are unpacked to: KEYHOLD_NATIVE_CACHE, else systemd's CACHE_DIRECTORY,
 * else $XDG_CACHE_HOME/keyhold/native, else ~/.cache/keyhold/native.
 */
export function nativeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KEYHOLD_NATIVE_CACHE) return env.KEYHOLD_NATIVE_CACHE;
  if (env.CACHE_DIRECTORY) return join(env.CACHE_DIRECTORY.split(':')[0]!, 'native');
  const home = (() => {
    try {
      return homedir();
    } catch {
      return '';
    }
  })();
  const base =
    env.XDG_CACHE_HOME || (home ? join(home, '.cache') : join(tmpdir(), `keyhold-${process.getuid?.() ?? 'user'}`));
  return join(base, 'keyhold', 'native');
}

/** Create `dir` (0700) if missing; refuse one that another user could write to or that is a symlink. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory()) throw new Error(`native addon cache ${dir} is not a directory (a symlink or file is refused)`);
  if (uid !== undefined && st.uid !== uid)
    throw new Error(
      `native addon cache ${dir} is owned by uid ${st.uid}, not by this user (${uid}); remove it or set KEYHOLD_NATIVE_CACHE`,
    );
  // Ours: tighten it if it was created looser (an older umask, a copy).
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** Read `path` if it is a regular file of ours whose SHA-256 is `hash`; otherwise null. */
function verifiedCopy(path: string, hash: string): boolean {
  try {
    const st = lstatSync(path);
    const uid = process.getuid?.();
    if (!st.isFile() || (uid !== undefined && st.uid !== uid)) return false;
    return sha256(readFileSync(path)) === hash;
  } catch {
    return false;
  }
}

/** Write `bytes` to `path` atomically: a fresh temporary file in the same folder, fsync, rename. */
function writeAtomic(path: string, bytes: Uint8Array): void {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  const fd = openSync(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | (fsc.O_NOFOLLOW ?? 0), 0o500);
  try {
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
}

/**
 * The path of the verified on-disk copy of embedded asset `name` (unpacked on first use, replaced
 * when its bytes differ from the asset). `dir` defaults to nativeCacheDir().
 */
export function unpackAddon(name: string, bytes: Uint8Array, dir = nativeCacheDir()): string {
  ensurePrivateDir(dir);
  const hash = sha256(bytes);
  // The hash in the name: executables of different versions share the folder without clashing.
  const path = join(dir, `${hash.slice(0, 16)}-${name}`);
  if (!verifiedCopy(path, hash)) {
    rmSync(path, { force: true });
    writeAtomic(path, bytes);
    if (!verifiedCopy(path, hash))
      throw new Error(`native addon ${name}: the copy in ${dir} does not match the embedded one`);
  }
  return path;
}

/** Load the embedded native addon `name` (asset key, e.g. "pkcs11.node") and return its exports. */
export function loadEmbeddedAddon(name: string): unknown {
  const s = seaModule();
  if (!s) throw new Error(`native addon ${name}: not running inside the keyhold executable`);
  let asset: ArrayBuffer;
  try {
    asset = s.getAsset(name);
  } catch {
    throw new Error(`native addon ${name} is not embedded in this executable`);
  }
  const bytes = new Uint8Array(asset);
  const path = unpackAddon(name, bytes);
  // Hash once more right before loading: the copy checked above is the copy loaded (the folder is ours alone).
  const hash = sha256(bytes);
  if (sha256(readFileSync(path)) !== hash)
    throw new Error(`native addon ${name}: ${path} changed before loading; refusing it`);
  const mod = { exports: {} as unknown };
  process.dlopen(mod, path);
  return mod.exports;
}
