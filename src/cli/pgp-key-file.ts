/**
 * PGP public keys named on the command line, as the vault CLI takes them (`-pgp-key`, `-pgp-keys`,
 * `-root-token-pgp-key`): a file holding the binary key or its base64, optionally as `@file`; the
 * server gets base64 of the binary key. A list is comma-separated, one file per share.
 */
import { readFileSync } from 'node:fs';
import { LocalError } from './errors.js';

/** The base64 of the binary public key in file `v` (`@file` accepted); `flag` names it in errors. */
export function pgpKeyFile(v: string, flag = '-pgp-key'): string {
  const path = v.startsWith('@') ? v.slice(1) : v;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new LocalError(
      `${flag}: cannot read the PGP key file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const text = bytes.toString('utf8').trim();
  if (text.startsWith('-----BEGIN')) {
    throw new LocalError(
      `${flag}: ${path} is ASCII-armored; export the binary key instead (gpg --export KEYID > key.gpg)`,
    );
  }
  return (bytes[0]! & 0x80) !== 0 ? bytes.toString('base64') : text.replace(/\s+/g, '');
}

/** The keys of a comma-separated list of files (`-pgp-keys=alice.gpg,bob.gpg`). */
export function pgpKeyFiles(list: string, flag = '-pgp-keys'): string[] {
  const files = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!files.length) throw new LocalError(`${flag}: give one key file per share, separated by commas`);
  return files.map((f) => pgpKeyFile(f, flag));
}
