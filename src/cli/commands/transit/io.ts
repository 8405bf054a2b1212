/**
 * Input and output shared by the transit data commands: input bytes from stdin or --file (base64 for
 * the API), a ciphertext from the argument or stdin, raw bytes to stdout, and the common flags.
 */
import type { FlagSpec, Invocation } from '../../command.js';
import { LocalError } from '../../errors.js';

/** Raw input bytes from --file or stdin. */
export async function inputBytes(inv: Invocation): Promise<Buffer> {
  const file = inv.opts.file as string | undefined;
  if (file) {
    const { readFile } = await import('node:fs/promises');
    try {
      return await readFile(file);
    } catch (e) {
      throw new LocalError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  return inv.io.stdin();
}

/** Input as base64 for the API (`--base64`: the input already is base64 text). */
export async function inputBase64(inv: Invocation): Promise<string> {
  const b = await inputBytes(inv);
  if (!inv.opts.base64) return b.toString('base64');
  const s = b.toString('utf8').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0)
    throw new LocalError('--base64: input is not valid base64');
  return s;
}

/** A positional value or, when absent, stdin text (trimmed). */
export async function argOrStdin(inv: Invocation, arg: string | undefined, what: string): Promise<string> {
  const v = arg && arg !== '-' ? arg : (await inv.io.stdin()).toString('utf8').trim();
  if (!v) throw new LocalError(`no ${what} given (argument or stdin)`);
  return v;
}

/** The transit mount from --mount, without slashes. */
export const mountOf = (inv: Invocation): string => String(inv.opts.mount ?? 'transit').replace(/^\/+|\/+$/g, '');

/** One URL path segment. */
export const seg = (s: string): string => encodeURIComponent(s);

/** An integer flag value. */
export const intOpt = (v: string): number => {
  if (!/^-?\d+$/.test(v)) throw new LocalError(`expected an integer, got "${v}"`);
  return Number(v);
};

/** Whether the user asked for structured output (then print the response data instead of raw bytes). */
export function structured(inv: Invocation): boolean {
  const g = inv.globals;
  return Boolean(g.field || (g.format && g.format !== 'raw'));
}

/** Write bytes or text to stdout, resolved once written. */
export async function writeOut(inv: Invocation, data: Buffer | string): Promise<void> {
  await new Promise<void>((resolve, reject) => inv.io.stdout.write(data, (e) => (e ? reject(e) : resolve())));
}

/** The response's `data` object. */
export function dataOf(res: { body: Record<string, unknown> | null }): Record<string, unknown> {
  return (res.body?.data ?? {}) as Record<string, unknown>;
}

/** --mount of every transit command. */
export const MOUNT: FlagSpec = {
  flags: '--mount <path>',
  help: 'mount path of the transit engine',
  default: 'transit',
};

/** --file and --base64 of the commands reading input bytes. */
export const INPUT: FlagSpec[] = [
  { flags: '--file <path>', help: 'read the input from this file instead of stdin' },
  { flags: '--base64', help: 'the input is already base64 text' },
];
