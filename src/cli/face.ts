/**
 * The two faces of one program (issue 34): run as `keyhold` it is keyhold's CLI; run under the name
 * `vault` (a symlink or copy) it behaves as HashiCorp's vault CLI. bin/keyhold.js picks the face
 * from the basename it was started as.
 */
export type Face = 'keyhold' | 'vault';

/** The face of a program started as `scriptPath` (process.argv[1]): `vault`, `vault.js`, `vault.cjs` are the vault face. */
export function faceOf(scriptPath: string | undefined): Face {
  const base = (scriptPath ?? '').split(/[\\/]/).pop() ?? '';
  return /^vault(\.c?js|\.exe)?$/i.test(base) ? 'vault' : 'keyhold';
}
