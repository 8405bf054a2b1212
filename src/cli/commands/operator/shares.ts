/** What the operator commands share: key shares from stdin or @file, whole-number flags. */
import type { Invocation } from '../../command.js';
import { LocalError } from '../../errors.js';

/** Key shares from `-`/absent (stdin, or a hidden prompt on a TTY) or `@file`; a literal key is refused (ps, shell history), except in the vault face (with a warning). */
export async function readShares(inv: Invocation, arg: string | undefined, prompt: string): Promise<string[]> {
  let text: string;
  if (arg === undefined || arg === '-') text = await inv.secret(prompt);
  else if (arg.startsWith('@')) text = await inv.valueOf(arg);
  else if (inv.face === 'vault') {
    // The vault CLI takes the share as an argument (`vault operator unseal KEY`): accepted, with a warning.
    inv.warn('a key share given on the command line shows in ps and the shell history; give it on stdin instead');
    text = arg;
  } else
    throw new LocalError(
      'give key shares on stdin or as @file, not on the command line (it would show in ps and the shell history)',
    );
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
}

/** Parser of a whole-number flag `--name`. */
export const int = (name: string) => (v: string) => {
  if (!/^\d+$/.test(v)) throw new LocalError(`--${name} must be a whole number, got "${v}"`);
  return Number(v);
};

/** Whether the output is for machines (json, yaml or one field). */
export function machineReadable(inv: Invocation): boolean {
  const g = inv.globals;
  return g.format === 'json' || g.format === 'yaml' || Boolean(g.field);
}
