/** What the operator commands share: key shares from stdin or @file, whole-number flags. */
import type { Invocation } from '../../command.js';
import { LocalError } from '../../errors.js';

/** Key shares from `-`/absent (stdin, or a hidden prompt on a TTY) or `@file`; a literal key is refused (ps, shell history). */
export async function readShares(inv: Invocation, arg: string | undefined, prompt: string): Promise<string[]> {
  let text: string;
  if (arg === undefined || arg === '-') text = await inv.secret(prompt);
  else if (arg.startsWith('@')) text = await inv.valueOf(arg);
  else throw new LocalError('give key shares on stdin or as @file, not on the command line (it would show in ps and the shell history)');
  return text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
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
