/** The native-addon cache of the single executable (src/native/embedded-addon.ts), on real files. */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ensurePrivateDir,
  isSingleExecutable,
  nativeCacheDir,
  unpackAddon,
} from '../../../src/native/embedded-addon.js';

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'keyhold-native-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('native addon cache', () => {
  it('is not the single executable under vitest', () => {
    expect(isSingleExecutable()).toBe(false);
  });

  it('picks KEYHOLD_NATIVE_CACHE, then systemd CACHE_DIRECTORY, then XDG_CACHE_HOME', () => {
    expect(nativeCacheDir({ KEYHOLD_NATIVE_CACHE: '/x/y' })).toBe('/x/y');
    expect(nativeCacheDir({ CACHE_DIRECTORY: '/var/cache/keyhold' })).toBe('/var/cache/keyhold/native');
    expect(nativeCacheDir({ XDG_CACHE_HOME: '/home/u/.cache' })).toBe('/home/u/.cache/keyhold/native');
  });

  it('writes the addon into a new 0700 folder under a name carrying its hash, read-only', () => {
    const dir = join(temp(), 'a', 'native');
    const path = unpackAddon('x.node', Buffer.from('library bytes'), dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(path, 'utf8')).toBe('library bytes');
    expect(path).toMatch(/[\\/][0-9a-f]{16}-x\.node$/);
    expect(statSync(path).mode & 0o222).toBe(0);
  });

  it('replaces a tampered copy with the embedded bytes', () => {
    const dir = join(temp(), 'native');
    const path = unpackAddon('x.node', Buffer.from('good'), dir);
    chmodSync(path, 0o600);
    writeFileSync(path, 'evil');
    expect(unpackAddon('x.node', Buffer.from('good'), dir)).toBe(path);
    expect(readFileSync(path, 'utf8')).toBe('good');
  });

  it('tightens a folder of ours that others could write to', () => {
    const dir = join(temp(), 'loose');
    mkdirSync(dir, { mode: 0o777 });
    chmodSync(dir, 0o777);
    ensurePrivateDir(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('refuses a symlinked folder', () => {
    const base = temp();
    mkdirSync(join(base, 'real'));
    symlinkSync(join(base, 'real'), join(base, 'link'));
    expect(() => ensurePrivateDir(join(base, 'link'))).toThrow(/not a directory/);
  });

  it.skipIf(process.getuid?.() !== 0)('refuses a folder owned by another user (root only: needs chown)', () => {
    const dir = join(temp(), 'theirs');
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 65534, 65534);
    expect(() => unpackAddon('x.node', Buffer.from('good'), dir)).toThrow(/owned by uid 65534/);
    expect(existsSync(join(dir, 'x.node'))).toBe(false);
  });
});
